"""SummaryWriter: logs scalars, histograms, images, text, graphs, hparams, embeddings, ... to
TensorBoard event files, with torch.utils.tensorboard's API. Pure Python: the protobuf messages
are encoded by hand (_proto) and framed as TFRecords (_record); neither tensorflow, tensorboard
nor protobuf is needed to write.
"""
import os
import time

from . import _proto
from ._embedding import add_embedding as _add_embedding
from ._record import EventFileWriter
from . import summary as _summary

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event messages to one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event_bytes):
        """Queues one serialized Event message."""
        self.event_writer.add_event(event_bytes)

    def add_summary(self, summary, global_step=None, walltime=None):
        """summary: a serialized Summary message."""
        self.add_event(_proto.event(wall_time=time.time() if walltime is None else walltime,
                                    step=0 if global_step is None else int(global_step),
                                    summary=summary))

    def add_graph(self, graph_def, run_metadata=None, walltime=None):
        """Writes a GraphDef event, then the RunMetadata tagged "step1" if given."""
        wall_time = time.time() if walltime is None else walltime
        self.add_event(_proto.event(wall_time=wall_time, graph_def=graph_def))
        if run_metadata is not None:
            tagged = _proto.tagged_run_metadata("step1", run_metadata)
            self.add_event(_proto.event(wall_time=wall_time, tagged_run_metadata=tagged))

    def flush(self):
        """Writes the queued events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flushes and closes the event file."""
        self.event_writer.close()


class SummaryWriter:
    """Writes entries to event files in `log_dir` for TensorBoard to show.

    log_dir defaults to runs/<Mon><DD>_<HH>-<MM>-<SS>_<hostname><comment>. purge_step: on resuming
    after a crash at step T+X, pass T so TensorBoard discards the events with step >= T of earlier
    runs. Events are written once `max_queue` are pending or every `flush_secs` seconds.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _summary.tensorflow_bins()

    def _get_file_writer(self):
        """The main writer, reopened (in a new file) after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # a file_version event with a step makes TensorBoard drop later steps already seen
                step = self.purge_step
                self.file_writer.add_event(_proto.event(wall_time=time.time(), step=step,
                                                        file_version="brain.Event:2"))
                self.file_writer.add_event(_proto.event(
                    wall_time=time.time(), step=step,
                    session_log=_proto.session_log(_proto.SESSION_LOG_START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory this writer logs to."""
        return self.log_dir

    def _add(self, summary, global_step, walltime):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Logs a hyperparameter set and its metrics as one run (a subdirectory of log_dir)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as run_writer:
            for part in (exp, ssi, sei):
                run_writer.file_writer.add_summary(part, global_step)
            for key, value in metric_dict.items():
                run_writer.add_scalar(key, value, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Logs one number (a Python number, 1-element array or tensor) at global_step."""
        self._add(_summary.scalar(tag, scalar_value, new_style=new_style,
                                  double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """One run per key (log_dir/<main_tag>_<key>), each logging `main_tag`, so TensorBoard
        draws them in one chart."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run_dir = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(run_dir)
            if writer is None:
                writer = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[run_dir] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Logs a whole tensor (tensor plugin) in TensorFlow's TensorProto."""
        self._add(_summary.tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """bins: 'tensorflow' (TF's exponential buckets) or anything numpy.histogram takes."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(_summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """Logs a histogram from precomputed statistics and bucket counts."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(_summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                         bucket_counts), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """uint8 images are 0..255, float ones 0..1; dataformats CHW, HWC, HW, ..."""
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images tiled into one grid (8 per row)."""
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """Draws box outlines (x1, y1, x2, y2 per row of box_tensor) onto the image; labels
        (one per box, drawn with Pillow's default font) are dropped if their count differs."""
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._add(_summary.image_boxes(tag, img_tensor, box_tensor, rescale=rescale,
                                       dataformats=dataformats, labels=labels),
                  global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Renders a matplotlib figure (or list of figures) and logs it as an image."""
        image = _summary.figure_to_image(figure, close)
        self.add_image(tag, image, global_step, walltime,
                       dataformats="NCHW" if isinstance(figure, list) else "CHW")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """vid_tensor: N x T x C x H x W (uint8 0..255 or float 0..1); the N clips play side by
        side as one animated GIF."""
        self._add(_summary.video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Logs a mono clip (1-D, values in [-1, 1]) as 16-bit WAV."""
        self._add(_summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Logs a string (rendered as Markdown by TensorBoard)."""
        self._add(_summary.text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Logs the module's graph: one node per operation, grouped under its module's scope."""
        from ._graph import graph
        graph_def, run_metadata = graph(model, input_to_model, verbose)
        self._get_file_writer().add_graph(graph_def, run_metadata)

    @staticmethod
    def _encode(rawstr):
        # tags become directory names: escape the characters that would split or escape a path
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Writes mat (N x D) as tensors.tsv, metadata.tsv and sprite.png under
        log_dir/<step>/<tag>/ and lists it in projector_config.pbtxt for the projector."""
        if not hasattr(self, "_projector_entries"):
            self._projector_entries = []
        _add_embedding(self._get_file_writer().get_logdir(), self._projector_entries,
                       self._encode(tag), mat, metadata, label_img, global_step, tag,
                       metadata_header)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Logs a precision-recall curve of binary labels vs predicted probabilities."""
        labels, predictions = _summary.make_np(labels), _summary.make_np(predictions)
        self._add(_summary.pr_curve(tag, labels, predictions, num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        """Logs a precision-recall curve from precomputed counts, precision and recall."""
        self._add(_summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                        true_negative_counts, false_negative_counts, precision,
                                        recall, num_thresholds, weights), global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """A custom-scalars layout with one chart plotting `tags` together."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """A custom-scalars layout with one chart of a value and its lower/upper bounds."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout):
        """layout: {category: {chart: ["Multiline", [tag regexes]] or
        ["Margin", [value, lower, upper]]}}; call once, before or after the scalars."""
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """Point clouds / meshes for the mesh plugin: vertices (B x N x 3 coordinates), faces
        (B x F x 3 vertex indices), colors (B x N x 3, 0..255); config_dict: three.js settings."""
        self._add(_summary.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def add_onnx_graph(self, prototxt):
        """Logs the graph of an ONNX model file (reading it needs the `onnx` package)."""
        from ._graph import onnx_graph
        self._get_file_writer().add_graph(onnx_graph(prototxt))

    def flush(self):
        """Writes every pending event of this writer (and its add_scalars runs) to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flushes and closes all event files; using the writer again opens a new one."""
        if self.all_writers is None:
            return  # closing twice is harmless
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
