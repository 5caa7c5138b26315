"""ember.distributed.elastic: the launcher's worker-side helpers (torch.distributed.elastic's layout)."""
