"""ember.utils.tensorboard: SummaryWriter writes TensorBoard event files (scalars, histograms,
images, text, graphs, hparams, PR curves, embeddings, custom scalar layouts) with no dependency on
tensorflow, tensorboard or protobuf; view them with `tensorboard --logdir runs`."""
from ._record import RecordWriter
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
