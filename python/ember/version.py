"""Ember's version (as torch.version.__version__), in a module of its own so that layers below
`ember` (ember.onnx writes it into exported models) can read it without importing the top."""
__version__ = "0.1.0"
