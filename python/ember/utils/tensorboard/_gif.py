"""Animated GIF encoder for add_video (TensorBoard shows videos as GIF images).

Colour frames are mapped onto a fixed 6x7x6 RGB palette (252 colours, green gets the extra
level because the eye resolves it best); grey frames use all 256 grey levels, losslessly. The
pixels are compressed with GIF's variable-width LZW.
"""
import struct

import numpy as np

_LEVELS = (6, 7, 6)


def _palette(channels):
    if channels == 1:
        grey = np.arange(256, dtype=np.uint8)
        return np.stack([grey] * 3, 1)
    r, g, b = np.meshgrid(*[np.round(np.arange(n) * 255 / (n - 1)) for n in _LEVELS], indexing="ij")
    colours = np.stack([r.ravel(), g.ravel(), b.ravel()], 1).astype(np.uint8)
    return np.concatenate([colours, np.zeros((256 - len(colours), 3), np.uint8)])


def _indices(frame):
    """Palette index of every pixel of an H x W x C uint8 frame."""
    if frame.shape[2] == 1:
        return frame[:, :, 0]
    rgb = frame[:, :, :3].astype(np.int32)
    r, g, b = (np.rint(rgb[:, :, k] * (n - 1) / 255).astype(np.int32) for k, n in enumerate(_LEVELS))
    return (r * _LEVELS[1] * _LEVELS[2] + g * _LEVELS[2] + b).astype(np.uint8)


def lzw_compress(indices, min_code_size=8):
    """GIF LZW: codes start at min_code_size + 1 bits, grow to 12, then the table is cleared."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    out = bytearray()
    buffer = bits = 0
    code_size = min_code_size + 1
    table = {}
    next_code = end + 1

    buffer, bits = clear, code_size
    data = bytes(indices)
    prefix = data[0]
    for byte in data[1:]:
        key = (prefix << 8) | byte
        code = table.get(key)
        if code is not None:
            prefix = code
            continue
        buffer |= prefix << bits
        bits += code_size
        while bits >= 8:
            out.append(buffer & 0xFF)
            buffer >>= 8
            bits -= 8
        if next_code < 4096:
            table[key] = next_code
            next_code += 1
            # the decoder widens its codes once it has assigned the code that needs more bits
            if next_code > (1 << code_size) and code_size < 12:
                code_size += 1
        else:
            buffer |= clear << bits
            bits += code_size
            table.clear()
            next_code = end + 1
            code_size = min_code_size + 1
        prefix = byte
    for code in (prefix, end):
        buffer |= code << bits
        bits += code_size
        # the end code may need one more bit if the last entry just widened the codes
        if code == prefix and next_code >= (1 << code_size) and code_size < 12:
            code_size += 1
    while bits > 0:
        out.append(buffer & 0xFF)
        buffer >>= 8
        bits -= 8
    return bytes(out)


def _sub_blocks(data):
    return b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255]
                    for i in range(0, len(data), 255)) + b"\x00"


def encode_gif(frames, fps):
    """frames: T x H x W x C uint8 (C = 1, 3 or 4; alpha is dropped). Loops forever."""
    frames = np.asarray(frames, dtype=np.uint8)
    _, height, width, channels = frames.shape
    if height > 65535 or width > 65535:
        raise ValueError(f"a GIF frame is at most 65535 pixels wide and high, got {height}x{width}")
    delay = max(int(round(100 / fps)), 1)  # centiseconds
    parts = [b"GIF89a", struct.pack("<HHBBB", width, height, 0xF7, 0, 0),
             _palette(channels).tobytes(),
             b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"]
    for frame in frames:
        parts.append(b"\x21\xf9\x04\x00" + struct.pack("<H", delay) + b"\x00\x00")
        parts.append(b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0))
        parts.append(b"\x08" + _sub_blocks(lzw_compress(_indices(frame).ravel())))
    parts.append(b"\x3b")
    return b"".join(parts)
