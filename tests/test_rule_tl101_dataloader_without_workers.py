"""TL101 dataloader-without-workers beyond its examples: loaders followed to their loops, tests, scripts that run at import."""

from __future__ import annotations

import pytest
from conftest import fixed_source, lint_source

LOOP = "    for x, y in loader:\n        x = x.to(device)\n        model(x).sum().backward()\n"


@pytest.mark.parametrize(
    "setup",
    [
        # a same-file factory function
        "def make():\n    return DataLoader(ds, batch_size=8)\n\n\ndef train():\n    loader = make()\n",
        # unpacked from a factory returning a pair
        "def make():\n    return DataLoader(ds), DataLoader(vs)\n\n\ndef train():\n    loader, _ = make()\n",
        # a `with ... as` target
        "def train():\n    with tqdm(DataLoader(ds)) as loader:\n        pass\n",
    ],
)
def test_loaders_are_followed_to_their_loops(setup):
    text = "from torch.utils.data import DataLoader\n\n\n" + setup + LOOP
    assert [d.code for d in lint_source("TL101", text)] == ["TL101"]


def test_loader_kept_on_self_is_followed_across_methods():
    text = (
        "from torch.utils.data import DataLoader\n\n\nclass Trainer:\n    def setup(self):\n"
        "        self.train_loader = DataLoader(self.ds, batch_size=8, num_workers=4)\n\n"
        "    def fit(self):\n        for batch in self.train_loader:\n            self.model(batch[0].cuda()).sum().backward()\n"
    )
    found = lint_source("TL101", text)
    assert [d.code for d in found] == ["TL101"]
    assert "pin_memory" in found[0].message and "num_workers" not in found[0].message


def test_unit_tests_are_not_flagged():
    text = (
        "from torch.utils.data import DataLoader\n\n\ndef test_fit():\n    loader = DataLoader(ds)\n"
        + LOOP
    )
    assert lint_source("TL101,TL102,TL103", text, path="tests/test_fit.py") == []


def test_workers_are_not_added_to_a_script_that_runs_at_import():
    text = (
        "from torch.utils.data import DataLoader\n\n\ndef main():\n    loader = DataLoader(ds, batch_size=8)\n"
        + LOOP
        + "\n\nmain()\n"
    )
    found = lint_source("TL101", text)
    assert (
        len(found) == 1 and "__main__" in found[0].fix.message
    )  # the help line says why workers wait
    assert "loader = DataLoader(ds, batch_size=8, pin_memory=True)\n" in fixed_source("TL101", text)


def test_a_loader_rebound_in_a_branch_that_returns_feeds_only_that_branch():
    """Round 9 (a `--phase analysis` branch that rebinds the validation loader for a one-off
    pass and returns): the training code after the branch iterates the first loader."""
    text = (
        "from torch.utils.data import DataLoader\n\n\n"
        "def validate(loader, model):\n"
        "    for x, y in loader:\n"
        "        model(x.to(device))\n\n\n"
        "def main(args, model, ds):\n"
        "    val_loader = DataLoader(ds, batch_size=32, num_workers=args.workers)\n"
        '    if args.phase == "analysis":\n'
        "        val_loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=args.workers)\n"
        "        collect_feature(val_loader, model)\n"
        "        return\n"
        "    validate(val_loader, model)\n"
    )
    assert [d.start.row for d in lint_source("TL101", text)] == [10]
