"""torchvision.utils: make_grid (tile a batch of images) and save_image (to a PNG file)."""
import math
import os

from .. import _C
from ..autograd.grad_mode import no_grad
from .io import png_bytes

__all__ = ["make_grid", "save_image"]


def _normalize_range(img, low, high):
    # in place: clamp to [low, high], then map it onto [0, 1]
    img.clamp_(min=low, max=high)
    img.sub_(low).div_(max(high - low, 1e-5))


def _normalize(t, value_range):
    if value_range is not None:
        _normalize_range(t, value_range[0], value_range[1])
    else:
        _normalize_range(t, float(t.min()), float(t.max()))


@no_grad()
def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """Tile a B x C x H x W batch (or a list of same-sized C x H x W images) into one image with
    min(nrow, B) images per row, `padding` pixels of `pad_value` between and around them.
    One-channel images become three-channel; normalize=True maps value_range (default: the
    data's min and max, per image with scale_each=True) onto [0, 1]."""
    if not isinstance(tensor, _C.TensorBase):
        if isinstance(tensor, (list, tuple)):
            for t in tensor:
                if not isinstance(t, _C.TensorBase):
                    raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if isinstance(tensor, (list, tuple)):
        tensor = _C._ops.stack(list(tensor), dim=0)
    if tensor.dim() == 2:  # one H x W image
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # one C x H x W image
        if tensor.size(0) == 1:
            tensor = _C._ops.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = _C._ops.cat((tensor, tensor, tensor), 1)
    if tensor.dim() != 4:
        raise ValueError(f"make_grid expects a tensor of 2, 3 or 4 dimensions, got {tensor.dim()}")

    if normalize:
        tensor = tensor.clone()  # never modify the caller's images
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        if scale_each:
            for t in tensor:
                _normalize(t, value_range)
        else:
            _normalize(tensor, value_range)

    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def _format_of(fp, format):
    if format is not None:
        return format.upper()
    name = os.fspath(fp) if isinstance(fp, (str, bytes, os.PathLike)) else getattr(fp, "name", None)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not isinstance(name, str):
        raise ValueError("save_image: the file object has no name to take the image format from; pass format=")
    ext = os.path.splitext(name)[1].lower()
    if not ext:
        raise ValueError(f"unknown file extension: {name!r} (pass format=)")
    return {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG"}.get(ext, ext[1:].upper())


@no_grad()
def save_image(tensor, fp, format=None, **kwargs):
    """Save make_grid(tensor, **kwargs), values in [0, 1] scaled to 8 bits, to fp (a path or a
    binary file object). PNG is written directly; other formats need Pillow."""
    grid = make_grid(tensor, **kwargs)
    # round half up to 8 bits, as torchvision does (x * 255 + 0.5, clamped, truncated)
    arr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(_C.uint8).numpy()
    fmt = _format_of(fp, format)
    if fmt == "PNG":
        data = png_bytes(arr)
        if isinstance(fp, (str, bytes, os.PathLike)):
            with open(fp, "wb") as f:
                f.write(data)
        else:
            fp.write(data)
        return
    try:
        from PIL import Image
    except ImportError:
        raise ValueError(f"save_image: format {fmt} needs Pillow (pip install pillow); PNG is written without it") \
            from None
    Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr).save(fp, format=format)
