"""Hand-written protobuf encoding of the TensorBoard messages the writer emits.

Each message is built by a function returning its serialized bytes; fields are emitted in
field-number order and proto3 defaults are left out (except for members of a oneof, which are
written even when zero), so the bytes match what the protobuf library would produce. Field
numbers follow tensorboard/compat/proto (event.proto, summary.proto, tensor.proto, graph.proto,
node_def.proto, attr_value.proto) and the hparams / custom_scalar / pr_curve / text plugins.
"""
import struct

import numpy as np

# tensorflow DataType enum values used by the writer
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8 = 1, 2, 3, 4, 5, 6
DT_STRING, DT_INT64, DT_BOOL, DT_BFLOAT16, DT_HALF = 7, 9, 10, 14, 19

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


def varint(value):
    """Base-128 varint; negative integers take their 64-bit two's complement (10 bytes)."""
    value = int(value)
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(field, wire_type):
    return varint((field << 3) | wire_type)


def int_field(field, value, always=False):
    """int32/int64/uint/enum/bool field (varint)."""
    if not value and not always:
        return b""
    return _key(field, _VARINT) + varint(value)


def double_field(field, value, always=False):
    if value == 0 and not always and not _is_negative_zero(value):
        return b""
    return _key(field, _FIXED64) + struct.pack("<d", value)


def _as_float32_bytes(values):
    # like protobuf's C cast: doubles beyond float32's range become +-inf instead of failing
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float64).astype("<f4").tobytes()


def float_field(field, value, always=False):
    if value == 0 and not always and not _is_negative_zero(value):
        return b""
    try:
        return _key(field, _FIXED32) + struct.pack("<f", value)
    except OverflowError:
        return _key(field, _FIXED32) + _as_float32_bytes([value])


def _is_negative_zero(value):
    # proto3 keeps -0.0 (its bit pattern differs from the default)
    return value == 0 and struct.pack("<d", value)[7] == 0x80


def bytes_field(field, data, always=False):
    """string/bytes field; str is written as UTF-8."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data and not always:
        return b""
    return _key(field, _LENGTH) + varint(len(data)) + data


def message_field(field, encoded):
    """An embedded message; None means unset (an empty but set message is still written)."""
    if encoded is None:
        return b""
    return _key(field, _LENGTH) + varint(len(encoded)) + encoded


def repeated_bytes(field, items):
    return b"".join(bytes_field(field, item, always=True) for item in items)


def repeated_messages(field, items):
    return b"".join(message_field(field, item) for item in items)


def packed_doubles(field, values):
    values = list(values)
    if not values:
        return b""
    return bytes_field(field, struct.pack(f"<{len(values)}d", *values))


def packed_floats(field, values):
    values = list(values)
    if not values:
        return b""
    return bytes_field(field, _as_float32_bytes(values))


def packed_varints(field, values):
    values = list(values)
    if not values:
        return b""
    return bytes_field(field, b"".join(varint(v) for v in values))


# ---- event.proto -------------------------------------------------------------------------------

SESSION_LOG_START = 1


def event(wall_time=0.0, step=0, file_version=None, graph_def=None, summary=None,
          session_log=None, tagged_run_metadata=None, source_metadata=None):
    """tensorboard.Event; file_version .. tagged_run_metadata form the `what` oneof."""
    return (double_field(1, wall_time) + int_field(2, step)
            + (b"" if file_version is None else bytes_field(3, file_version, always=True))
            + (b"" if graph_def is None else bytes_field(4, graph_def, always=True))
            + message_field(5, summary) + message_field(7, session_log)
            + message_field(8, tagged_run_metadata) + message_field(10, source_metadata))


def session_log(status):
    return int_field(1, status)


def source_metadata(writer):
    return bytes_field(1, writer)


def tagged_run_metadata(tag, run_metadata):
    return bytes_field(1, tag) + bytes_field(2, run_metadata)


# ---- summary.proto -----------------------------------------------------------------------------

def summary(values):
    return repeated_messages(1, values)


def summary_value(tag, simple_value=None, image=None, histo=None, audio=None, tensor=None,
                  metadata=None):
    """Summary.Value: simple_value, image, histo, audio and tensor form the `value` oneof."""
    return (bytes_field(1, tag)
            + (b"" if simple_value is None else float_field(2, simple_value, always=True))
            + message_field(4, image) + message_field(5, histo) + message_field(6, audio)
            + message_field(8, tensor) + message_field(9, metadata))


def summary_metadata(plugin_name, content=b"", display_name=None, description=None):
    return (message_field(1, bytes_field(1, plugin_name) + bytes_field(2, content))
            + bytes_field(2, display_name or "") + bytes_field(3, description or ""))


def image_message(height, width, colorspace, encoded):
    return (int_field(1, height) + int_field(2, width) + int_field(3, colorspace)
            + bytes_field(4, encoded))


def audio_message(sample_rate, num_channels, length_frames, encoded, content_type):
    return (float_field(1, sample_rate) + int_field(2, num_channels) + int_field(3, length_frames)
            + bytes_field(4, encoded) + bytes_field(5, content_type))


def histogram_proto(min, max, num, sum, sum_squares, bucket_limit, bucket):
    return (double_field(1, min) + double_field(2, max) + double_field(3, num)
            + double_field(4, sum) + double_field(5, sum_squares)
            + packed_doubles(6, bucket_limit) + packed_doubles(7, bucket))


# ---- tensor.proto / tensor_shape.proto ---------------------------------------------------------

def tensor_shape(dims):
    return b"".join(message_field(2, int_field(1, d)) for d in dims)


def tensor_proto(dtype, shape, float_val=(), double_val=(), int_val=(), string_val=(),
                 int64_val=(), bool_val=(), half_val=()):
    """TensorProto with values in the typed repeated fields (never tensor_content); shape None
    leaves tensor_shape unset, () sets it to the (empty) shape of a 0-d tensor."""
    return (int_field(1, dtype) + message_field(2, None if shape is None else tensor_shape(shape))
            + packed_floats(5, float_val) + packed_doubles(6, double_val)
            + packed_varints(7, int_val) + repeated_bytes(8, string_val)
            + packed_varints(10, int64_val) + packed_varints(11, bool_val)
            + packed_varints(13, half_val))


# ---- graph.proto / node_def.proto / attr_value.proto -------------------------------------------

def attr_string(value):
    return bytes_field(2, value, always=True)


def attr_type(dtype_enum):
    return int_field(6, dtype_enum, always=True)


def attr_shape(dims):
    return message_field(7, tensor_shape(dims))


def attr_shapes(shapes):
    """AttrValue.list of shapes (torch's `_output_shapes`)."""
    return message_field(1, repeated_messages(7, [tensor_shape(s) for s in shapes]))


def node_def(name, op, inputs=(), device="", attrs=None):
    # map<string, AttrValue>: one entry message per key, written in key order
    entries = [bytes_field(1, k, always=True) + message_field(2, v)
               for k, v in sorted((attrs or {}).items())]
    return (bytes_field(1, name) + bytes_field(2, op) + repeated_bytes(3, inputs)
            + bytes_field(4, device) + repeated_messages(5, entries))


def graph_def(nodes, producer=22):
    return repeated_messages(1, nodes) + message_field(4, int_field(1, producer))


def run_metadata(device):
    """RunMetadata holding one (empty) DeviceStepStats, which TensorBoard uses to name the device."""
    return message_field(1, message_field(1, bytes_field(1, device)))


# ---- plugins -----------------------------------------------------------------------------------

def text_plugin_data():
    return int_field(1, 0)  # version 0: empty message


def pr_curve_plugin_data(num_thresholds):
    return int_field(1, 0) + int_field(2, num_thresholds)


MESH_VERTEX, MESH_FACE, MESH_COLOR = 1, 2, 3


def mesh_plugin_data(name, content_type, components, shape, json_config):
    return (bytes_field(2, name) + int_field(3, content_type) + bytes_field(5, json_config)
            + packed_varints(6, shape) + int_field(7, components))


def layout(categories):
    """custom_scalar Layout; categories: [(title, [(chart_title, kind, tags)])]."""
    encoded = []
    for title, charts in categories:
        chart_msgs = []
        for chart_title, kind, tags in charts:
            if kind == "Margin":
                series = bytes_field(1, tags[0]) + bytes_field(2, tags[1]) + bytes_field(3, tags[2])
                body = message_field(3, message_field(1, series))
            else:
                body = message_field(2, repeated_bytes(1, tags))
            chart_msgs.append(bytes_field(1, chart_title) + body)
        encoded.append(bytes_field(1, title) + repeated_messages(2, chart_msgs))
    return repeated_messages(2, encoded)


# google.protobuf.Value / ListValue, used by the hparams plugin
def struct_value(value):
    if isinstance(value, bool):
        return int_field(4, value, always=True)
    if isinstance(value, str):
        return bytes_field(3, value, always=True)
    return double_field(2, float(value), always=True)


def list_value(values):
    return repeated_messages(1, [struct_value(v) for v in values])


HPARAM_STRING, HPARAM_BOOL, HPARAM_FLOAT64 = 1, 2, 3
STATUS_SUCCESS = 1


def hparam_info(name, type_, domain_discrete=None):
    return (bytes_field(1, name) + int_field(4, type_)
            + message_field(5, None if domain_discrete is None else list_value(domain_discrete)))


def experiment(hparam_infos, metric_tags):
    metric_infos = [message_field(1, bytes_field(2, tag)) for tag in metric_tags]
    return repeated_messages(4, hparam_infos) + repeated_messages(5, metric_infos)


def session_start_info(hparams):
    """hparams: [(name, python value)] in insertion order (a map<string, Value>)."""
    entries = [bytes_field(1, k, always=True) + message_field(2, struct_value(v))
               for k, v in hparams]
    return repeated_messages(1, entries)


def session_end_info(status):
    return int_field(1, status)


def hparams_plugin_data(experiment=None, session_start_info=None, session_end_info=None):
    # version 0 (PLUGIN_DATA_VERSION) is the default and so is left out
    return (message_field(2, experiment) + message_field(3, session_start_info)
            + message_field(4, session_end_info))
