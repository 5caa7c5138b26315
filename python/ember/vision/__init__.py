"""ember.vision: torchvision's role (import ember.vision as torchvision): datasets (MNIST /
FashionMNIST from local IDX files, FakeData, ImageFolder), transforms, models (ResNet, VGG,
AlexNet, MobileNetV2), utils (make_grid, save_image) and io (PNG encoding). Nothing is ever
downloaded."""
from . import datasets, io, models, transforms, utils  # noqa: F401
