"""ember.func (torch.func): composable function transforms: grad, vjp, jvp, jacrev, jacfwd, hessian,
linearize and vmap, and the helpers that run nn.Modules under them (functional_call,
stack_module_state). Built on Ember's autograd engine; see each module for how."""
from ._autodiff import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._modules import (
    debug_unwrap, functional_call, functionalize, replace_all_batch_norm_modules_, stack_module_state,
)
from ._rearrange import rearrange
from ._vmap import vmap

__all__ = [
    "grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize", "hessian", "jacfwd",
    "jacrev", "jvp", "linearize", "rearrange", "vjp", "functional_call", "stack_module_state", "debug_unwrap",
]
