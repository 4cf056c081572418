import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(TESTS))  # the repository: engine, eval, models, ...
sys.path.insert(1, TESTS)  # shared test helpers (golden)
