"""Datasets read from local files (or generated: FakeData)."""
from .fakedata import FakeData  # noqa: F401
from .folder import DatasetFolder, ImageFolder  # noqa: F401
from .mnist import MNIST, FashionMNIST, read_idx  # noqa: F401
from .vision import StandardTransform, VisionDataset  # noqa: F401

__all__ = ["MNIST", "FashionMNIST", "FakeData", "DatasetFolder", "ImageFolder", "VisionDataset",
           "StandardTransform", "read_idx"]
