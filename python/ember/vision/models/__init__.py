"""Model architectures (torchvision.models) with torchvision's module and parameter names, so its
state_dicts load with strict=True. Randomly initialised: nothing is downloaded (weights=None)."""
from ._utils import get_model, get_model_builder, list_models  # noqa: F401
from .alexnet import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
