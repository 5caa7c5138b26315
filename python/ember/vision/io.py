"""PNG encoding (torchvision.io.encode_png / write_png), written with zlib and struct only, so
saving images needs no image library. 8-bit grayscale, grayscale+alpha, RGB and RGBA."""
import struct
import zlib

from .. import _C

__all__ = ["encode_png", "write_png", "write_file", "png_bytes"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# channels -> PNG colour type (0 gray, 4 gray+alpha, 2 RGB, 6 RGBA)
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


def _chunk(kind, data):
    # length, type, data, CRC-32 of type + data
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(array, compression_level=6):
    """PNG file contents for a uint8 NumPy array laid out HxW or HxWxC (C in 1..4)."""
    import numpy as np
    if array.dtype != np.uint8:
        raise TypeError(f"Input tensor dtype should be uint8, got {array.dtype}")
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] not in _COLOR_TYPES:
        raise ValueError(f"The number of channels should be 1, 2, 3 or 4, got an array of shape {array.shape}")
    if not 0 <= compression_level <= 9:
        raise ValueError(f"Compression level should be between 0 and 9, got {compression_level}")
    h, w, c = array.shape
    if h == 0 or w == 0:
        raise ValueError(f"Cannot encode an empty image of shape {array.shape}")
    # each scanline: filter type 0 (None), then the row's bytes
    rows = np.empty((h, w * c + 1), dtype=np.uint8)
    rows[:, 0] = 0
    rows[:, 1:] = np.ascontiguousarray(array).reshape(h, w * c)
    header = struct.pack(">IIBBBBB", w, h, 8, _COLOR_TYPES[c], 0, 0, 0)
    return (_PNG_SIGNATURE + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), compression_level)) + _chunk(b"IEND", b""))


def encode_png(input, compression_level=6):
    """A CxHxW uint8 tensor (C = 1, 2, 3 or 4) -> 1-D uint8 tensor of the PNG file's bytes."""
    import numpy as np
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"Input should be a Tensor, got {type(input)}")
    if input.dtype is not _C.uint8:
        raise RuntimeError(f"Input tensor dtype should be uint8, got {input.dtype}")
    if input.dim() != 3:
        raise RuntimeError(f"Input data should be a 3-dimensional tensor, got {input.dim()} dims")
    if input.size(0) not in _COLOR_TYPES:
        raise RuntimeError(f"The number of channels should be 1, 2, 3 or 4, got {input.size(0)}")
    data = png_bytes(input.detach().cpu().numpy().transpose(1, 2, 0), compression_level)
    return _C.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    """Write a 1-D uint8 tensor's bytes to filename."""
    with open(filename, "wb") as f:
        f.write(data.numpy().tobytes())


def write_png(input, filename, compression_level=6):
    """encode_png(input) written to filename."""
    write_file(filename, encode_png(input, compression_level))
