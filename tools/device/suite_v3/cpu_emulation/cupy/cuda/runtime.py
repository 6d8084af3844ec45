"""The two runtime constants check_kernels.py passes to texture descriptors."""

cudaResourceTypeLinear = 1
cudaChannelFormatKindFloat = 2
