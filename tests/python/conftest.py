"""Test-session settings: the suite runs on shared 2-core machines, where OpenMP's default of
spinning idle threads slows both libraries badly when other processes hold the cores. Passive
waiting changes timing only (set before ember or torch load libgomp), never results."""
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, os.path.dirname(__file__))  # parity.py and opdb.py
