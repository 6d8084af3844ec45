"""1-D linear textures: the CPU build's tex1Dfetch reads the array the texture object holds."""


class ChannelFormatDescriptor:
    def __init__(self, x: int, y: int, z: int, w: int, kind: int):
        self.bits = (x, y, z, w)


class ResourceDescriptor:
    def __init__(self, restype: int, cuArr=None, arr=None, chDesc=None, sizeInBytes: int = 0, **_):  # noqa: N803
        self.arr = arr


class TextureDescriptor:
    def __init__(self, *_, **__):
        pass


class TextureObject:
    def __init__(self, res: ResourceDescriptor, tex: TextureDescriptor):
        self.arr = res.arr
