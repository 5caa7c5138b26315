"""Minimal PNG encoder (8-bit grey, RGB or RGBA; no filtering) on top of zlib."""
import struct
import zlib

import numpy as np

_COLOR_TYPES = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type (grey, truecolour, with alpha)


def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def encode_png(image):
    """image: uint8 array of shape (H, W, C) with C in 1, 3, 4."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] not in _COLOR_TYPES:
        raise TypeError(f"cannot encode an image of shape {tuple(image.shape)} as PNG "
                        "(expected height x width x 1, 3 or 4 channels)")
    height, width, channels = image.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    # every scanline starts with its filter type; 0 (none) lets zlib do all the work
    rows = np.concatenate([np.zeros((height, 1), np.uint8), image.reshape(height, -1)], axis=1)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b""))
