"""train.py with another learning rate: a "fix" that is deliberately not equivalent.

Imports train.py from its own directory, which works only if sys.path[0] is set as
`python train_lr.py` sets it.
"""

from train import train

train(lr=0.3)
