"""cupy.cuda as check_kernels.py uses it."""

from . import runtime, texture  # noqa: F401


class Device:
    def synchronize(self) -> None:
        """CPU launches are synchronous."""
