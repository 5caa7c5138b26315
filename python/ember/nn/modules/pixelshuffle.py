"""PixelShuffle, PixelUnshuffle and ChannelShuffle."""
from .module import Module
from .utils import F

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """Module form of F.pixel_shuffle: channels into spatial blocks.

    (*, C r^2, H, W) -> (*, C, H r, W r)."""

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Module form of F.pixel_unshuffle: spatial blocks into channels.

    (*, C, H r, W r) -> (*, C r^2, H, W)."""

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Splits the C channels of (N, C, *) into `groups` groups and interleaves them."""

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
