"""Transforms (torchvision.transforms): callables on images (tensors [..., C, H, W] or NumPy HW/HWC
arrays); random ones draw from ember's global RNG, so ember.manual_seed makes them reproducible."""
import math
import numbers
import warnings
from collections.abc import Sequence

from ... import _C
from . import functional as F
from .functional import InterpolationMode

__all__ = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "Normalize", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomRotation", "Resize", "RandomResizedCrop", "CenterCrop", "Pad", "Lambda", "InterpolationMode"]


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return tuple(size)


class Compose:
    """Apply transforms one after another."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        s = self.__class__.__name__ + "("
        for t in self.transforms:
            s += f"\n    {t}"
        return s + "\n)"


class ToTensor:
    """HW / HWC image (PIL image, NumPy array or tensor) -> CHW float tensor, uint8 scaled to [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """PIL image -> C x H x W tensor of its pixel values (no scaling)."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """C x H x W tensor or H x W x C NumPy array -> PIL image (needs Pillow)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{self.__class__.__name__}(" + (f"mode={self.mode}" if self.mode is not None else "") + ")"


class Normalize:
    """(x - mean[c]) / std[c] for each channel c of a float tensor image."""

    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def __call__(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Pad:
    def __init__(self, padding, fill=0, padding_mode="constant"):
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element "
                             "tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def __call__(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class RandomCrop:
    """A random size crop, after optional padding (padding, pad_if_needed, fill, padding_mode)."""

    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = int(_C._ops.randint(0, h - th + 1, size=(1,)).item())
        j = int(_C._ops.randint(0, w - tw + 1, size=(1,)).item())
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = tuple(_setup_size(size, "Please provide only two dimensions (h, w) for size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def __call__(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, h, w = F.get_dimensions(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, [self.size[1] - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, [0, self.size[0] - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirror left-right with probability p."""

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if _C._ops.rand(1).item() < self.p:
            return F.hflip(img)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(RandomHorizontalFlip):
    """Mirror top-bottom with probability p."""

    def __call__(self, img):
        if _C._ops.rand(1).item() < self.p:
            return F.vflip(img)
        return img


class RandomRotation:
    """Rotate by an angle drawn uniformly from degrees ((-d, d) for a number), nearest-neighbour."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        if isinstance(interpolation, int):
            raise TypeError("Argument interpolation should be of type InterpolationMode")
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = [-degrees, degrees]
        elif not isinstance(degrees, Sequence) or len(degrees) != 2:
            raise ValueError("If degrees is a sequence, it must be of len 2.")
        self.degrees = [float(d) for d in degrees]
        if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
            raise ValueError("If center is a sequence, it must be of len 2.")
        self.center = center
        self.interpolation = interpolation
        self.expand = expand
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        return float(_C._ops.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def __call__(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)

    def __repr__(self):
        s = f"{self.__class__.__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}, " \
            f"expand={self.expand}"
        if self.center is not None:
            s += f", center={self.center}"
        if self.fill is not None:
            s += f", fill={self.fill}"
        return s + ")"


class Resize:
    """Resize to size ((h, w), or an int: the smaller edge, keeping the aspect ratio); bilinear by default."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        if isinstance(interpolation, int):
            raise TypeError("Argument interpolation should be of type InterpolationMode")
        self.interpolation = interpolation
        self.antialias = antialias

    def __call__(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


class RandomResizedCrop:
    """A crop of random area (a `scale` fraction of the image) and aspect ratio (log-uniform in
    `ratio`), resized to size; the whole image (centre-cropped to the ratio range) if ten draws
    do not fit."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if isinstance(interpolation, int):
            raise TypeError("Argument interpolation should be of type InterpolationMode")
        self.interpolation = interpolation
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * float(_C._ops.empty(1).uniform_(scale[0], scale[1]).item())
            aspect = math.exp(float(_C._ops.empty(1).uniform_(log_ratio[0], log_ratio[1]).item()))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                i = int(_C._ops.randint(0, height - h + 1, size=(1,)).item())
                j = int(_C._ops.randint(0, width - w + 1, size=(1,)).item())
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, list(self.size), self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class CenterCrop:
    """The centred crop of the given size (zero-padded when the image is smaller)."""

    def __init__(self, size):
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def __call__(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Lambda:
    """Apply a user function."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"

