"""What every model builder shares: the weights / pretrained arguments (nothing is downloaded
here) and the registry behind get_model / list_models."""
import warnings

__all__ = ["handle_weights", "register_model", "get_model", "list_models", "get_model_builder"]

_MODELS = {}


def register_model(fn):
    _MODELS[fn.__name__] = fn
    return fn


def list_models():
    """Names of the model builders, sorted."""
    return sorted(_MODELS)


def get_model_builder(name):
    name = name.lower()
    if name not in _MODELS:
        raise ValueError(f"Unknown model {name}")
    return _MODELS[name]


def get_model(name, **config):
    """The model built by the builder called `name` with keyword arguments `config`."""
    return get_model_builder(name)(**config)


def handle_weights(name, weights, kwargs):
    """Accept weights=None / pretrained=False (random initialisation); refuse real weights with a
    clear message, since ember.vision never downloads. Removes the legacy keywords from kwargs."""
    pretrained = kwargs.pop("pretrained", None)
    kwargs.pop("progress", None)
    if pretrained is not None:
        warnings.warn("The parameter 'pretrained' is deprecated, please use 'weights' instead.", UserWarning)
        if pretrained and weights is None:
            weights = "DEFAULT"
    if weights is not None:
        raise ValueError(f"{name}: weights={weights!r} asks for pretrained weights, which ember.vision does not "
                         "download. Build the model with weights=None and load a saved state_dict: "
                         "model.load_state_dict(ember.load(path)).")
