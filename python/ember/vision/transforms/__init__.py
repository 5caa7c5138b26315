"""Image transforms (torchvision.transforms): on ember tensors [..., C, H, W] and NumPy HW/HWC arrays."""
from . import functional  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .functional import InterpolationMode  # noqa: F401
