"""TL104 and the weight a loss is scaled by before its backward.

`(loss * weight).backward()` backpropagates `loss`'s graph; `weight` (a micro-batch's token
count over the batch's, `micro_tokens / total_tokens`) only scales it. Accumulating a detached
metric times that count (`metrics[k] += v.detach() * micro_tokens`) keeps no graph alive:
open-instruct's DPO train module, judged FP, where the rule took the count for the loss because
it is a factor of the backpropagated product. The factor beside the loss is followed only when
nothing beside it is a loss; the loss itself, accumulated as is, stays a finding.
"""

from __future__ import annotations

from conftest import lint_source

_MODULE = """\
import torch
from olmo_core.train.train_module import TransformerTrainModule


class DPOTrainModule(TransformerTrainModule):
    def __init__(self, device):
        self._metrics = {{k: torch.tensor(0.0, device=device) for k in ["loss", "accuracy"]}}

    def train_batch(self, batch):
        micro_batches = split_batch(batch, 4)
        micro_token_counts = [collator.get_num_tokens(mb) for mb in micro_batches]
        total_tokens = sum(micro_token_counts)
        for idx, micro_batch in enumerate(micro_batches):
            with self._context(idx):
                loss, step_metrics = self._compute_loss(micro_batch)
                micro_tokens = micro_token_counts[idx]
                weight = micro_tokens / total_tokens
                for k, v in step_metrics.items():
                    self._metrics[k] += {added}
                (loss * weight).backward()
"""


def _rows(text: str) -> list[int]:
    return [d.start.row for d in lint_source("TL104", text) if d.code == "TL104"]


def test_tl104_detached_metric_times_the_loss_weight_is_clean():
    assert _rows(_MODULE.format(added="v.detach() * micro_tokens")) == []


def test_tl104_the_weighted_loss_itself_is_still_flagged():
    assert _rows(_MODULE.format(added="loss * micro_tokens")) == [19]
