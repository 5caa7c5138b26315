"""Summary builders: turn values (Ember tensors, numpy arrays, Python numbers) into serialized
`Summary` messages for the scalars, histograms, images (and GIF videos), audio, text, hparams,
pr_curves, mesh, custom_scalars and tensor plugins, with the tags and plugin metadata
TensorBoard expects.
"""
import io
import json
import math
import wave

import numpy as np

from ..._tensor import Tensor
from . import _proto
from ._gif import encode_gif
from ._png import encode_png

__all__ = ["make_np", "scalar", "histogram", "histogram_raw", "make_histogram", "image",
           "image_boxes", "video", "prepare_video", "audio", "text", "hparams", "pr_curve",
           "pr_curve_raw", "compute_curve", "mesh", "custom_scalars", "tensor_proto",
           "convert_to_HWC", "make_grid", "figure_to_image", "tensorflow_bins"]


def make_np(x):
    """numpy view of a value: arrays pass through, Python/numpy scalars become 1-element arrays,
    tensors are detached and copied to the CPU (bfloat16 goes through float16, numpy has none)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if str(x.dtype) == "ember.bfloat16":
            x = x.float().half()
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or ember tensor are expected.")


def scalar(name, value, new_style=False, double_precision=False):
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: "
                             f"{array.size} and {array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return _proto.summary([_proto.summary_value(name, simple_value=number)])
    if double_precision:
        tensor = _proto.tensor_proto(_proto.DT_DOUBLE, None, double_val=[number])
    else:
        tensor = _proto.tensor_proto(_proto.DT_FLOAT, None, float_val=[number])
    return _proto.summary([_proto.summary_value(
        name, tensor=tensor, metadata=_proto.summary_metadata("scalars"))])


# ---- histograms --------------------------------------------------------------------------------

def tensorflow_bins():
    """TensorFlow's default bucket edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0] + positive


def make_histogram(values, bins, max_bins=None):
    """HistogramProto of `values` (float array) for numpy-style `bins` (count, edges or rule
    name), merging buckets down to `max_bins` and keeping only the span of non-empty ones."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        remainder = len(counts) % group
        if remainder:
            counts = np.pad(counts, (0, group - remainder))
        counts = counts.reshape(-1, group).sum(axis=-1)
        merged = np.empty(counts.size + 1, limits.dtype)
        merged[:-1] = limits[:-1:group]
        merged[-1] = limits[-1]
        limits = merged
    nonzero = np.cumsum(counts > 0)
    start, end = np.searchsorted(nonzero, [0, nonzero[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    # TensorBoard stores right edges only; an empty bucket in front carries the left edge
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty (no finite values in the bins' range).")
    return _proto.histogram_proto(
        min=float(values.min()), max=float(values.max()), num=float(len(values)),
        sum=float(values.sum()), sum_squares=float(values.dot(values)),
        bucket_limit=[float(x) for x in limits], bucket=[float(x) for x in counts])


def histogram(name, values, bins, max_bins=None):
    array = make_np(values).astype(float)
    return _proto.summary([_proto.summary_value(name, histo=make_histogram(array, bins, max_bins))])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    histo = _proto.histogram_proto(float(min), float(max), float(num), float(sum),
                                   float(sum_squares), [float(x) for x in bucket_limits],
                                   [float(x) for x in bucket_counts])
    return _proto.summary([_proto.summary_value(name, histo=histo)])


# ---- images ------------------------------------------------------------------------------------

def make_grid(images, ncols=8):
    """N x C x H x W (C = 1 or 3) -> one 3 x H' x W' canvas, row-major, at most ncols wide."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("make_grid expects a numpy array")
    if images.ndim == 4 and images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D array with 1 or 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = int(math.ceil(count / ncols))
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        y, x = divmod(i, ncols)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = images[i]
    return canvas


def convert_to_HWC(array, input_format):
    """Reorders an image (or batch, tiled by make_grid) to H x W x C; grey becomes RGB."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {input_format}")
    if array.ndim != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor "
                             f"shape: {array.shape}, input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = array.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = array.transpose([input_format.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc] * 3, 2)
        return hwc
    if len(input_format) == 2:
        hw = array.transpose([input_format.find(c) for c in "HW"])
        return np.stack([hw] * 3, 2)
    raise AssertionError(f"unsupported dataformats {input_format!r}")


def _to_uint8(array):
    # uint8 images are taken as 0..255, everything else as 0..1
    scale = 1 if array.dtype == np.uint8 else 255
    return (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def _image_message(hwc):
    height, width, channels = hwc.shape
    return _proto.image_message(height, width, channels, encode_png(hwc))


def image(tag, tensor, dataformats="NCHW"):
    hwc = _to_uint8(convert_to_HWC(make_np(tensor), dataformats))
    return _proto.summary([_proto.summary_value(tag, image=_image_message(hwc))])


def _draw_boxes(hwc, boxes):
    """Red 2-pixel outlines of boxes (x1, y1, x2, y2 in pixels) on the same pixels as the
    ImageDraw.line(width=2) path torch's writer draws: coordinates truncate to integers; each
    side of the path (left, bottom, right, top) covers its own pixels plus the next ones to the
    right of its direction, and a zero-length side is one pixel."""
    hwc = hwc.copy()
    height, width = hwc.shape[:2]
    red = np.array([255, 0, 0, 255][:hwc.shape[2]], np.uint8)
    for box in np.asarray(boxes, dtype=float).reshape(-1, 4):
        left, top, right, bottom = (int(v) for v in box)
        path = [(left, top), (left, bottom), (right, bottom), (right, top), (left, top)]
        for (x0, y0), (x1, y1) in zip(path, path[1:]):
            dx, dy = (x1 > x0) - (x1 < x0), (y1 > y0) - (y1 < y0)
            c0, c1 = max(min(x0, x1, x0 + dy), 0), min(max(x0, x1, x0 + dy), width - 1)
            r0, r1 = max(min(y0, y1, y0 + dx), 0), min(max(y0, y1, y0 + dx), height - 1)
            if c0 <= c1 and r0 <= r1:
                hwc[r0:r1 + 1, c0:c1 + 1] = red
    return hwc


def _draw_labels(hwc, boxes, labels):
    """Box captions need a font rasterizer: PIL's default font, as torch's writer uses."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as err:
        raise ImportError("add_image_with_boxes: drawing labels needs the Pillow package") from err
    image = Image.fromarray(hwc)
    draw, font = ImageDraw.Draw(image), ImageFont.load_default()
    for (left, _, _, bottom), label in zip(np.asarray(boxes, dtype=float).reshape(-1, 4), labels):
        if not label:
            continue
        x0, y0, x1, y1 = font.getbbox(label)
        text_width, text_height = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * text_height)
        draw.rectangle([(left, bottom - text_height - 2 * margin), (left + text_width, bottom)],
                       fill="Red")
        draw.text((left + margin, bottom - text_height - margin), label, fill="black", font=font)
    return np.asarray(image)


def _rescale(hwc, rescale):
    try:
        from PIL import Image
    except ImportError as err:
        raise ImportError("add_image_with_boxes: rescale != 1 needs the Pillow package") from err
    height, width = hwc.shape[:2]
    size = (int(width * rescale), int(height * rescale))
    return np.asarray(Image.fromarray(hwc).resize(size, Image.Resampling.LANCZOS))


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    hwc = _to_uint8(convert_to_HWC(make_np(tensor_image), dataformats))
    boxes = np.asarray(make_np(tensor_boxes), dtype=float).reshape(-1, 4)
    if labels is None:
        hwc = _draw_boxes(hwc, boxes)
    else:
        # box, caption, next box, ...: a later outline may cross an earlier caption
        for box, label in zip(boxes, labels):
            hwc = _draw_labels(_draw_boxes(hwc, box[None]), box[None], [label])
    height, width, channels = hwc.shape
    if rescale != 1:
        hwc = _rescale(hwc, rescale)
    # like torch's, the message keeps the size before rescaling
    message = _proto.image_message(height, width, channels, encode_png(hwc))
    return _proto.summary([_proto.summary_value(tag, image=message)])


def figure_to_image(figures, close=True):
    """Renders matplotlib figure(s) to uint8 CHW (or NCHW for a list) with the Agg backend."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
        width, height = figure.canvas.get_width_height()
        chw = np.moveaxis(rgba.reshape(height, width, 4)[:, :, :3], 2, 0)
        if close:
            plt.close(figure)
        return chw

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# ---- video -------------------------------------------------------------------------------------

def prepare_video(video):
    """B x T x C x H x W -> T x H' x W' x C: the batch tiled into a grid per frame (the batch is
    padded with black clips to a power of two; rows = 2 ** floor(log2(B) / 2))."""
    batch, frames, channels, height, width = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if batch & (batch - 1):
        padding = (1 << batch.bit_length()) - batch
        video = np.concatenate([video, np.zeros((padding, frames, channels, height, width))], 0)
    rows = 2 ** ((batch.bit_length() - 1) // 2)
    cols = video.shape[0] // rows
    video = video.reshape(rows, cols, frames, channels, height, width)
    video = video.transpose(2, 0, 4, 1, 5, 3)
    return video.reshape(frames, rows * height, cols * width, channels)


def video(tag, tensor, fps=4):
    array = make_np(tensor)
    if array.ndim != 5:
        raise ValueError(f"add_video expects a 5-D (N, T, C, H, W) tensor, got {array.ndim}-D")
    frames = _to_uint8(prepare_video(array))
    _, height, width, channels = frames.shape
    message = _proto.image_message(height, width, channels, encode_gif(frames, fps))
    return _proto.summary([_proto.summary_value(tag, image=message)])


# ---- audio, text, tensors ----------------------------------------------------------------------

def audio(tag, tensor, sample_rate=44100):
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    samples = (array * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(samples.tobytes())
    message = _proto.audio_message(sample_rate, 1, samples.shape[-1], buffer.getvalue(),
                                   "audio/wav")
    return _proto.summary([_proto.summary_value(tag, audio=message)])


def text(tag, text_string):
    tensor = _proto.tensor_proto(_proto.DT_STRING, (1,), string_val=[text_string.encode("utf-8")])
    metadata = _proto.summary_metadata("text", _proto.text_plugin_data())
    return _proto.summary([_proto.summary_value(tag + "/text_summary", tensor=tensor,
                                                metadata=metadata)])


def _half_bits(array, dtype):
    return array.astype(dtype).view(np.uint16).reshape(-1).tolist()


def tensor_proto(tag, tensor):
    """The whole tensor in a TensorProto (tensor plugin), in TensorFlow's typed value fields."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"add_tensor expects an ember tensor, got {type(tensor).__name__}")
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = str(tensor.dtype).replace("ember.", "")
    shape = tuple(tensor.shape)
    if name == "bfloat16":
        # bfloat16's bits are the top half of float32's
        bits = (tensor.detach().cpu().float().numpy().reshape(-1).view(np.uint32) >> 16)
        body = _proto.tensor_proto(_proto.DT_BFLOAT16, shape, half_val=bits.tolist())
    else:
        array = tensor.detach().cpu().numpy()
        flat = array.reshape(-1)
        if name == "float16":
            body = _proto.tensor_proto(_proto.DT_HALF, shape, half_val=_half_bits(flat, np.float16))
        elif name == "float32":
            body = _proto.tensor_proto(_proto.DT_FLOAT, shape, float_val=flat.tolist())
        elif name == "float64":
            body = _proto.tensor_proto(_proto.DT_DOUBLE, shape, double_val=flat.tolist())
        elif name in ("int8", "int16", "int32", "uint8"):
            dtype = {"int8": _proto.DT_INT8, "int16": _proto.DT_INT16, "int32": _proto.DT_INT32,
                     "uint8": _proto.DT_UINT8}[name]
            body = _proto.tensor_proto(dtype, shape, int_val=flat.tolist())
        elif name == "int64":
            body = _proto.tensor_proto(_proto.DT_INT64, shape, int64_val=flat.tolist())
        elif name == "bool":
            body = _proto.tensor_proto(_proto.DT_BOOL, shape, bool_val=flat.tolist())
        else:
            raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    return _proto.summary([_proto.summary_value(tag, tensor=body,
                                                metadata=_proto.summary_metadata("tensor"))])


# ---- hparams -----------------------------------------------------------------------------------

_EXPERIMENT_TAG = "_hparams_/experiment"
_SESSION_START_TAG = "_hparams_/session_start_info"
_SESSION_END_TAG = "_hparams_/session_end_info"


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three summaries of the hparams plugin: experiment, session start, session end."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    infos, values = [], []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        domain = hparam_domain_discrete.get(k)
        # bool is checked after int/float on purpose: a bool hparam is stored as a number, as
        # torch's writer does
        if isinstance(v, (int, float)):
            values.append((k, float(v)))
            infos.append(_proto.hparam_info(k, _proto.HPARAM_FLOAT64,
                                            None if domain is None else [float(d) for d in domain]))
        elif isinstance(v, str):
            values.append((k, v))
            infos.append(_proto.hparam_info(k, _proto.HPARAM_STRING, domain))
        elif isinstance(v, Tensor):
            values.append((k, float(make_np(v).reshape(-1)[0])))
            infos.append(_proto.hparam_info(k, _proto.HPARAM_FLOAT64))
        else:
            raise ValueError("value should be one of int, float, str, bool, or ember.Tensor")

    def plugin_summary(tag, **content):
        metadata = _proto.summary_metadata("hparams", _proto.hparams_plugin_data(**content))
        return _proto.summary([_proto.summary_value(tag, metadata=metadata)])

    exp = plugin_summary(_EXPERIMENT_TAG,
                         experiment=_proto.experiment(infos, list(metric_dict)))
    ssi = plugin_summary(_SESSION_START_TAG,
                         session_start_info=_proto.session_start_info(values))
    sei = plugin_summary(_SESSION_END_TAG,
                         session_end_info=_proto.session_end_info(_proto.STATUS_SUCCESS))
    return exp, ssi, sei


# ---- pr curves ---------------------------------------------------------------------------------

def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """tp, fp, tn, fn, precision, recall at num_thresholds evenly spaced thresholds in [0, 1]."""
    minimum_count = 1e-7
    if weights is None:
        weights = 1.0
    bucket_indices = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=span,
                                 weights=float_labels * weights)
    fp_buckets, _ = np.histogram(bucket_indices, bins=num_thresholds, range=span,
                                 weights=(1.0 - float_labels) * weights)
    # counts at threshold i are those predicted at or above it: reverse cumulative sums
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum_count, tp + fp)
    recall = tp / np.maximum(minimum_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _pr_summary(tag, data, num_thresholds):
    tensor = _proto.tensor_proto(_proto.DT_FLOAT, data.shape,
                                 float_val=data.astype(np.float32).reshape(-1).tolist())
    metadata = _proto.summary_metadata("pr_curves", _proto.pr_curve_plugin_data(num_thresholds))
    return _proto.summary([_proto.summary_value(tag, tensor=tensor, metadata=metadata)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    # the pr_curves plugin stores thresholds in a small field: torch caps them at 127
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)
    data = np.stack([make_np(x) for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, num_thresholds)


# ---- meshes ------------------------------------------------------------------------------------

def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """One tensor summary per given part (vertices, faces, colors; each B x N x 3) for the mesh
    plugin, tagged <tag>_VERTEX / _FACE / _COLOR and sharing a bitmask of the parts present."""
    json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(vertices, _proto.MESH_VERTEX, "VERTEX"), (faces, _proto.MESH_FACE, "FACE"),
             (colors, _proto.MESH_COLOR, "COLOR")]
    parts = [p for p in parts if p[0] is not None]
    components = 0
    for _, content_type, _ in parts:
        components |= 1 << content_type
    values = []
    for data, content_type, suffix in parts:
        array = make_np(data)
        if array.ndim != 3:
            raise ValueError(f"Tensor shape should be of shape BxNx3, but got {list(array.shape)}.")
        content = _proto.mesh_plugin_data(tag, content_type, components, array.shape, json_config)
        metadata = _proto.summary_metadata("mesh", content, display_name, description)
        tensor = _proto.tensor_proto(_proto.DT_FLOAT, array.shape,
                                     float_val=array.reshape(-1).astype(np.float32).tolist())
        values.append(_proto.summary_value(f"{tag}_{suffix}", tensor=tensor, metadata=metadata))
    return _proto.summary(values)


# ---- custom scalars ----------------------------------------------------------------------------

def custom_scalars(layout):
    """layout: {category: {chart title: ["Multiline", [tags]] or ["Margin", [value, lo, hi]]}}."""
    categories = []
    for category, charts in layout.items():
        entries = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin" and len(tags) != 3:
                raise AssertionError("len(tags) != 3")
            entries.append((title, kind, list(tags)))
        categories.append((category, entries))
    tensor = _proto.tensor_proto(_proto.DT_STRING, (), string_val=[_proto.layout(categories)])
    return _proto.summary([_proto.summary_value(
        "custom_scalars__config__", tensor=tensor,
        metadata=_proto.summary_metadata("custom_scalars"))])
