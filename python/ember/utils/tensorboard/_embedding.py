"""Embedding projector files: tensors.tsv, metadata.tsv, sprite.png and projector_config.pbtxt
(the ProjectorConfig message in protobuf text format, which the projector plugin parses)."""
import math
import os

import numpy as np

from ._png import encode_png
from .summary import make_grid, make_np


def _quote(text):
    # protobuf text-format string literal
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in "\"'\\":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append("\\%03o" % byte)
    return '"' + "".join(out) + '"'


def projector_config_text(entries):
    """entries: dicts with tensor_name, tensor_path and optional metadata_path, sprite_path,
    sprite_dims; fields in field-number order as protobuf's text format prints them."""
    lines = []
    for entry in entries:
        lines.append("embeddings {")
        lines.append(f"  tensor_name: {_quote(entry['tensor_name'])}")
        if entry.get("metadata_path"):
            lines.append(f"  metadata_path: {_quote(entry['metadata_path'])}")
        if entry.get("sprite_path"):
            lines.append("  sprite {")
            lines.append(f"    image_path: {_quote(entry['sprite_path'])}")
            lines.extend(f"    single_image_dim: {int(d)}" for d in entry["sprite_dims"])
            lines.append("  }")
        lines.append(f"  tensor_path: {_quote(entry['tensor_path'])}")
        lines.append("}")
    return "".join(line + "\n" for line in lines)


def _write_metadata(metadata, save_path, metadata_header=None):
    if not metadata_header:
        rows = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        rows = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(rows) + "\n").encode("utf-8"))


def _write_sprite(label_img, save_path):
    """All label images tiled into one square PNG (the projector requires a square sprite)."""
    images = make_np(label_img)
    per_row = math.ceil(images.shape[0] ** 0.5)
    grid = make_grid(images, ncols=per_row)  # 3 x H' x W'
    side = grid.shape[2]
    square = np.zeros((side, side, 3))
    hwc = grid.transpose(1, 2, 0)
    square[:hwc.shape[0], :, :] = hwc
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(encode_png(np.uint8((square * 255).clip(0, 255))))


def _write_matrix(mat, save_path):
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(x.item()) for x in row) + "\n").encode("utf-8"))


def add_embedding(logdir, entries, encoded_tag, mat, metadata, label_img, global_step, tag,
                  metadata_header):
    mat = make_np(mat)
    if global_step is None:
        global_step = 0
    subdir = f"{str(global_step).zfill(5)}/{encoded_tag}"
    save_path = os.path.join(logdir, subdir)
    if os.path.exists(save_path):
        if not os.path.isdir(save_path):
            raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    else:
        os.makedirs(save_path)
    entry = {"tensor_name": f"{tag}:{str(global_step).zfill(5)}",
             "tensor_path": subdir + "/tensors.tsv"}
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        _write_metadata(metadata, save_path, metadata_header)
        entry["metadata_path"] = subdir + "/metadata.tsv"
    if label_img is not None:
        if mat.shape[0] != label_img.shape[0]:
            raise AssertionError("#images should equal with #data points")
        _write_sprite(label_img, save_path)
        entry["sprite_path"] = subdir + "/sprite.png"
        entry["sprite_dims"] = [label_img.shape[3], label_img.shape[2]]
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    _write_matrix(mat, save_path)
    entries.append(entry)
    with open(os.path.join(logdir, "projector_config.pbtxt"), "wb") as f:
        f.write(projector_config_text(entries).encode("utf-8"))
