"""VGG (Simonyan & Zisserman, 2014) as torchvision builds it, with and without batch norm."""
from ... import flatten, nn
from ._utils import handle_weights, register_model

__all__ = ["VGG", "make_layers", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
           "vgg19_bn"]

# output channels of each 3x3 convolution, "M" a 2x2 max pool
cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


def make_layers(cfg, batch_norm=False):
    """The convolutional trunk for a cfg list (see cfgs)."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
            if batch_norm:
                layers.append(nn.BatchNorm2d(v))
            layers.append(nn.ReLU(inplace=True))
            in_channels = v
    return nn.Sequential(*layers)


def _vgg(name, cfg, batch_norm, weights, kwargs):
    handle_weights(name, weights, kwargs)
    return VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)


@register_model
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration A)."""
    return _vgg("vgg11", "A", False, weights, kwargs)


@register_model
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch normalization."""
    return _vgg("vgg11_bn", "A", True, weights, kwargs)


@register_model
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration B)."""
    return _vgg("vgg13", "B", False, weights, kwargs)


@register_model
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch normalization."""
    return _vgg("vgg13_bn", "B", True, weights, kwargs)


@register_model
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration D)."""
    return _vgg("vgg16", "D", False, weights, kwargs)


@register_model
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch normalization."""
    return _vgg("vgg16_bn", "D", True, weights, kwargs)


@register_model
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration E)."""
    return _vgg("vgg19", "E", False, weights, kwargs)


@register_model
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch normalization."""
    return _vgg("vgg19_bn", "E", True, weights, kwargs)
