"""Datasets read from local files."""
from .mnist import MNIST, FashionMNIST, read_idx  # noqa: F401
from .vision import StandardTransform, VisionDataset  # noqa: F401

__all__ = ["MNIST", "FashionMNIST", "VisionDataset", "StandardTransform", "read_idx"]
