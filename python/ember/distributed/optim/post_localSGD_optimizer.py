"""PostLocalSGDOptimizer: a local optimizer followed by periodic model averaging (post-local SGD, Lin et al.
2018), as torch.distributed.optim.PostLocalSGDOptimizer."""
import warnings
from collections import OrderedDict

from ...optim.optimizer import Optimizer
from ..algorithms.model_averaging import averagers


class PostLocalSGDOptimizer(Optimizer):
    """Runs `optim` at every step, then `averager.average_parameters` on its param groups (after the
    warm-up, the averager averages the model across ranks every `period` steps). Use it with DDP's
    post_localSGD_hook, whose start_localSGD_iter equals the averager's warmup_steps."""

    def __init__(self, optim, averager: averagers.ModelAverager):
        self.optim = optim
        self.param_groups = self.optim.param_groups
        self.averager = averager
        # the step and state_dict hooks of ember.optim.Optimizer (its __init__, which needs params, is not run)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            setattr(self, name, OrderedDict())

    @property
    def state(self):
        """The local optimizer's state."""
        return self.optim.state

    def __repr__(self):
        return self.optim.__repr__()

    def state_dict(self):
        """The local optimizer's state_dict plus the averager's step ("step"), so reloading skips the warm-up."""
        optim_state_dict = self.optim.state_dict()
        optim_state_dict["step"] = self.averager.step
        return optim_state_dict

    def load_state_dict(self, state_dict):
        """Load the local optimizer's state and the averager's step (0, with a warning, when absent)."""
        self.optim.load_state_dict(state_dict)
        if "step" in state_dict:
            self.averager.step = state_dict["step"]
        else:
            warnings.warn("Loaded state dict does not contain a step counter for an averager. Setting step counter "
                          "to 0.", stacklevel=2)
            self.averager.step = 0

    def step(self):
        """One step of the local optimizer, then the averager's turn."""
        self.optim.step()
        self.averager.average_parameters(params=self.param_groups)

    def zero_grad(self, set_to_none=True):
        """The local optimizer's zero_grad."""
        self.optim.zero_grad(set_to_none=set_to_none)

    def add_param_group(self, param_group):
        """Add a param group to the local optimizer."""
        self.optim.add_param_group(param_group)
