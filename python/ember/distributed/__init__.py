"""ember.distributed: process groups, collectives and stores (torch.distributed's API)."""
