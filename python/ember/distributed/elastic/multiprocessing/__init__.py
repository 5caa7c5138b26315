"""ember.distributed.elastic.multiprocessing: how launched workers report their failures."""
