"""Image operations behind ember.vision.transforms.

Images are ember tensors laid out [..., C, H, W] (or [..., H, W]), NumPy arrays laid out HW or
HWC, or PIL images (ImageFolder's default loader gives those; PIL does their geometric ops, as in
torchvision). Geometric ops keep the kind and dtype of their input.
"""
import math
from enum import Enum

from ... import _C

__all__ = ["InterpolationMode", "to_tensor", "pil_to_tensor", "to_pil_image", "normalize", "hflip", "vflip", "crop",
           "center_crop", "pad", "resize", "resized_crop", "rotate", "get_dimensions"]


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# PIL resampling filter numbers (Image.Resampling) for each mode
_PIL_FILTERS = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0, InterpolationMode.BILINEAR: 2,
                InterpolationMode.BICUBIC: 3, InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5,
                InterpolationMode.LANCZOS: 1}


def _is_numpy(img):
    return type(img).__module__ == "numpy" and type(img).__name__ == "ndarray"


def _is_pil(img):
    # checked by name so that PIL is imported only by programs that use it
    return any(c.__module__ == "PIL.Image" and c.__name__ == "Image" for c in type(img).__mro__)


def _pil_fill(img, fill):
    # a number fills every band of a multi-band image
    bands = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and bands > 1:
        return tuple([int(fill)] * bands)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = list(fill) * bands
        if len(fill) != bands:
            raise ValueError(f"The number of elements in 'fill' does not match the number of bands of the image "
                             f"({len(fill)} != {bands})")
        return tuple(int(v) for v in fill) if bands > 1 else int(fill[0])
    return int(fill)


def _check_image(img):
    if isinstance(img, _C.TensorBase):
        if img.dim() < 2:
            raise TypeError(f"Tensor is not a torch image (expected at least 2 dims, got {img.dim()}).")
        return
    if _is_numpy(img):
        if img.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {img.ndim} dimensions.")
        return
    if _is_pil(img):
        return
    raise TypeError(f"img should be an ember Tensor or a NumPy array (or a PIL Image). Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width] of an image."""
    _check_image(img)
    if isinstance(img, _C.TensorBase):
        c = 1 if img.dim() == 2 else img.size(-3)
        return [c, img.size(-2), img.size(-1)]
    if _is_pil(img):
        return [len(img.getbands()), img.height, img.width]
    h, w = img.shape[:2]
    return [1 if img.ndim == 2 else img.shape[2], h, w]


def pil_to_tensor(pic):
    """PIL image -> C x H x W tensor of its pixel values, dtype kept (uint8 stays uint8)."""
    import numpy as np
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    # 32-bit int ("I"), 16-bit ("I;16") and float ("F") modes keep their values, the rest are 8-bit
    dtypes = {"I": np.int32, "I;16": np.int16, "I;16B": np.int16, "I;16L": np.int16, "F": np.float32}
    arr = np.array(pic, dtypes.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        arr = arr * np.uint8(255)
    arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return _C.from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))


def to_tensor(pic):
    """HW or HWC image (PIL image, NumPy array or tensor) -> CHW tensor; uint8 becomes float in [0, 1]."""
    import numpy as np
    if _is_pil(pic):
        img = pil_to_tensor(pic)
    elif isinstance(pic, _C.TensorBase):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        img = pic.unsqueeze(-1) if pic.dim() == 2 else pic
        img = img.permute(2, 0, 1).contiguous()
    elif _is_numpy(pic):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        img = _C.from_numpy(np.ascontiguousarray(arr.transpose((2, 0, 1))))
    else:
        raise TypeError(f"pic should be an ndarray or an ember Tensor (or a PIL Image). Got {type(pic)}")
    if img.dtype is _C.uint8:
        return img.to(_C.get_default_dtype()).div(255)
    return img


def to_pil_image(pic, mode=None):
    """C x H x W tensor or H x W (x C) NumPy array -> PIL image; floats are scaled by 255 to 8 bits.
    The mode defaults by channel count: L, LA, RGB, RGBA (I / F for one int32 / float32 channel
    of a NumPy array)."""
    import numpy as np
    from PIL import Image
    if isinstance(pic, _C.TensorBase):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).to(_C.uint8)  # wraps out-of-range values like torch's .byte()
        arr = pic.detach().cpu().numpy().transpose((1, 2, 0))
    elif _is_numpy(pic):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    channels = arr.shape[2]
    if channels == 1:
        arr = arr[:, :, 0]
        if mode is None:
            mode = {np.uint8: "L", np.int16: "I;16", np.int32: "I", np.float32: "F"}.get(arr.dtype.type)
            if mode is None:
                raise TypeError(f"Input type {arr.dtype} is not supported")
    elif mode is None:
        if arr.dtype != np.uint8:
            raise TypeError(f"Input type {arr.dtype} is not supported for {channels} channels")
        mode = {2: "LA", 3: "RGB", 4: "RGBA"}.get(channels)
        if mode is None:
            raise ValueError(f"pic should not have > 4 channels. Got {channels} channels.")
    img = Image.fromarray(np.ascontiguousarray(arr))
    return img if img.mode == mode else img.convert(mode)


def normalize(tensor, mean, std, inplace=False):
    """(x - mean) / std per channel of a [..., C, H, W] float tensor."""
    if not isinstance(tensor, _C.TensorBase):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    dtype = tensor.dtype
    mean_t = _C._ops.tensor(list(mean) if isinstance(mean, (list, tuple)) else [mean], dtype=dtype)
    std_t = _C._ops.tensor(list(std) if isinstance(std, (list, tuple)) else [std], dtype=dtype)
    if bool((std_t == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    mean_t = mean_t.view(-1, 1, 1)
    std_t = std_t.view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)


def hflip(img):
    """Mirror left-right."""
    _check_image(img)
    if isinstance(img, _C.TensorBase):
        return img.flip([-1])
    if _is_pil(img):
        return img.transpose(0)  # Image.Transpose.FLIP_LEFT_RIGHT
    return img[:, ::-1].copy()


def vflip(img):
    """Mirror top-bottom."""
    _check_image(img)
    if isinstance(img, _C.TensorBase):
        return img.flip([-2])
    if _is_pil(img):
        return img.transpose(1)  # Image.Transpose.FLIP_TOP_BOTTOM
    return img[::-1].copy()


def crop(img, top, left, height, width):
    """The height x width window at (top, left); parts outside the image are zero."""
    _check_image(img)
    if _is_pil(img):  # PIL fills what lies outside with zeros itself
        return img.crop((left, top, left + width, top + height))
    _, h, w = get_dimensions(img)
    if top < 0 or left < 0 or top + height > h or left + width > w:
        pads = [max(-left, 0), max(-top, 0), max(left + width - w, 0), max(top + height - h, 0)]
        img = pad(img, pads)
        top, left = top + pads[1], left + pads[0]
    if isinstance(img, _C.TensorBase):
        return img[..., top:top + height, left:left + width]
    return img[top:top + height, left:left + width].copy()


def _setup_size(size, msg="Please provide only two dimensions (h, w) for size."):
    if isinstance(size, int):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(msg)
    return tuple(size)


def center_crop(img, output_size):
    """The centred crop of output_size ((h, w) or an int), zero-padded if the image is smaller."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, h, w = get_dimensions(img)
    ch, cw = output_size
    if cw > w or ch > h:
        pads = [(cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0,
                (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0]
        img = pad(img, pads, fill=0)
        _, h, w = get_dimensions(img)
        if cw == w and ch == h:
            return img
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return crop(img, top, left, ch, cw)


def _parse_padding(padding):
    if isinstance(padding, int):
        return [padding] * 4
    padding = list(padding)
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the borders: padding int (all sides), (lr, tb) or (left, top, right, bottom); modes
    constant (with fill), edge, reflect, symmetric."""
    import numpy as np
    _check_image(img)
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _parse_padding(padding)
    if _is_pil(img):  # pad the pixel array, keeping the mode (and palette)
        from PIL import Image
        arr = np.asarray(img)
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
        if padding_mode == "constant":
            fill = _pil_fill(img, fill)
            out = np.empty((arr.shape[0] + top + bottom, arr.shape[1] + left + right) + arr.shape[2:], arr.dtype)
            out[...] = np.asarray(fill, dtype=arr.dtype)
            out[top:top + arr.shape[0], left:left + arr.shape[1]] = arr
        else:
            out = np.pad(arr, widths, mode=padding_mode)
        result = Image.fromarray(np.ascontiguousarray(out))
        if img.mode == "P":
            result.putpalette(img.getpalette())
        return result if result.mode == img.mode else result.convert(img.mode)
    is_tensor = isinstance(img, _C.TensorBase)
    arr = img.numpy() if is_tensor else img
    if is_tensor:
        widths = [(0, 0)] * (arr.ndim - 2) + [(top, bottom), (left, right)]
    else:
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if padding_mode == "constant":
        out = np.pad(arr, widths, mode="constant", constant_values=fill)
    else:
        out = np.pad(arr, widths, mode=padding_mode)
    return _C.from_numpy(np.ascontiguousarray(out)) if is_tensor else out


def _output_size(h, w, size, max_size):
    if isinstance(size, int) or len(size) == 1:
        requested = size if isinstance(size, int) else size[0]
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size (size={size})")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)
    return int(size[0]), int(size[1])


def _resize_tensor(img, oh, ow, mode, antialias):
    """torchvision's tensor resize: interpolate in float32 (float64 stays), align_corners=False for the
    linear and cubic modes; integer images come back rounded (bicubic uint8 clamped to [0, 255] first)."""
    from ...nn import functional as F
    shape = tuple(img.shape)
    x = img.reshape((-1,) + shape[-3:]) if img.dim() >= 3 else img.reshape((1, 1) + shape)
    out_dtype = x.dtype
    need_cast = out_dtype not in (_C.float32, _C.float64)
    if need_cast:
        x = x.to(_C.float32)
    align_corners = False if mode in ("bilinear", "bicubic") else None
    y = F.interpolate(x, size=[oh, ow], mode=mode, align_corners=align_corners, antialias=antialias)
    if mode == "bicubic" and out_dtype is _C.uint8:
        y = y.clamp(min=0, max=255)
    if need_cast:
        if not out_dtype.is_floating_point:
            y = y.round()
        y = y.to(out_dtype)
    return y.reshape(shape[:-2] + (oh, ow))


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to size ((h, w), or an int for the smaller edge keeping the aspect ratio). Tensors (and NumPy
    arrays, HW or HWC) go through interpolate as torchvision's tensor path: nearest, nearest-exact, bilinear
    and bicubic (antialiased by default, for the last two); PIL images through PIL."""
    import numpy as np
    _check_image(img)
    if isinstance(interpolation, str):
        interpolation = InterpolationMode(interpolation)
    _, h, w = get_dimensions(img)
    oh, ow = _output_size(h, w, size, max_size)
    if (oh, ow) == (h, w):
        return img
    if _is_pil(img):
        return img.resize((ow, oh), _PIL_FILTERS[interpolation])
    mode = interpolation.value
    if mode not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError(f"resize: interpolation {mode} is supported for PIL images only (tensors take nearest, "
                         "nearest-exact, bilinear and bicubic)")
    antialias = bool(antialias) and mode in ("bilinear", "bicubic")
    if isinstance(img, _C.TensorBase):
        return _resize_tensor(img, oh, ow, mode, antialias)
    chw = img.transpose((2, 0, 1)) if img.ndim == 3 else img  # HW(C) -> (C)HW
    out = _resize_tensor(_C.from_numpy(np.ascontiguousarray(chw)), oh, ow, mode, antialias).numpy()
    return np.ascontiguousarray(out.transpose((1, 2, 0)) if out.ndim == 3 else out)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """crop(img, top, left, height, width), then resize to size."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def _inverse_rotation_matrix(angle, center):
    """Matrix mapping output pixel coordinates (relative to the image centre) to input ones for a
    counter-clockwise rotation by `angle` degrees about `center` (also centre-relative)."""
    rot = math.radians(-angle)
    cx, cy = center
    a, b, c, d = math.cos(rot), -math.sin(rot), math.sin(rot), math.cos(rot)
    m = [d, -b, 0.0, -c, a, 0.0]
    m[2] += m[0] * (-cx) + m[1] * (-cy) + cx
    m[5] += m[3] * (-cx) + m[4] * (-cy) + cy
    return m


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
    """Rotate counter-clockwise by `angle` degrees about the centre (or `center`, in pixels),
    nearest-neighbour, filling uncovered pixels with `fill`."""
    import numpy as np
    _check_image(img)
    if isinstance(interpolation, str):
        interpolation = InterpolationMode(interpolation)
    if _is_pil(img):
        return img.rotate(angle, _PIL_FILTERS[interpolation], expand, center, fillcolor=_pil_fill(img, fill))
    if interpolation is not InterpolationMode.NEAREST:
        raise NotImplementedError("rotate: only nearest interpolation is supported")
    _, h, w = get_dimensions(img)
    center_f = [0.0, 0.0] if center is None else [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    m = _inverse_rotation_matrix(angle, center_f)
    if expand:
        # torchvision's bounding box: the corners through the (inverse) matrix, shifted to [0, w] x
        # [0, h], with the precision truncated to 1e-4 before ceil / floor
        corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, -0.5 * h, 1.0]], dtype=np.float32)
        pts = corners @ np.array(m, dtype=np.float32).reshape(2, 3).T
        shift = np.array([w * 0.5, h * 0.5], dtype=np.float32)
        tol = np.float32(1e-4)
        cmax = np.ceil(np.trunc((pts.max(0) + shift) / tol) * tol)
        cmin = np.floor(np.trunc((pts.min(0) + shift) / tol) * tol)
        ow, oh = int(cmax[0] - cmin[0]), int(cmax[1] - cmin[1])
    else:
        ow, oh = w, h
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow, dtype=np.float32)
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh, dtype=np.float32)
    gx, gy = np.meshgrid(xs, ys)
    mf = np.array(m, dtype=np.float32)
    src_x = mf[0] * gx + mf[1] * gy + mf[2] + np.float32((w - 1) / 2.0)
    src_y = mf[3] * gx + mf[4] * gy + mf[5] + np.float32((h - 1) / 2.0)
    ix = np.rint(src_x).astype(np.int64)
    iy = np.rint(src_y).astype(np.int64)
    valid = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    ixc, iyc = np.clip(ix, 0, w - 1), np.clip(iy, 0, h - 1)
    is_tensor = isinstance(img, _C.TensorBase)
    arr = img.numpy() if is_tensor else img
    if is_tensor:
        out = arr[..., iyc, ixc]
        fill_v = np.asarray(fill if fill is not None else 0, dtype=arr.dtype)
        if fill_v.ndim == 1 and arr.ndim >= 3:
            fill_v = fill_v.reshape(-1, 1, 1)
        out = np.where(valid, out, fill_v)
        return _C.from_numpy(np.ascontiguousarray(out.astype(arr.dtype)))
    out = arr[iyc, ixc]
    mask = valid if arr.ndim == 2 else valid[..., None]
    out = np.where(mask, out, np.asarray(fill if fill is not None else 0, dtype=arr.dtype))
    return np.ascontiguousarray(out.astype(arr.dtype))
