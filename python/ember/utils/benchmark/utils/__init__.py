"""torch.utils.benchmark.utils's layout: common (Measurement, TaskSpec, helpers), timer (Timer), compare (Compare)."""
