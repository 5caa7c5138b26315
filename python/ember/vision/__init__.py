"""ember.vision: a small torchvision (datasets.MNIST / FashionMNIST from local IDX files,
transforms on NumPy arrays and tensors). Nothing is ever downloaded."""
from . import datasets, transforms  # noqa: F401
