"""Examples of the closed hyperparameter table (HP): `check` applies its rows to a closed log, `advise` names the
RCP a run is measured against and predicts its verdict."""

from __future__ import annotations

from typing import Any

from cases_logs import CHECK_1_0, pair
from examplelog import Example, Log, closed_run

ADVISE_1_0 = ["advise", "--ruleset", "1.0.0"]


def _resnet(**hyperparameters: Any) -> Log:
    return closed_run("resnet", hyperparameters=hyperparameters)


def _table(code: str, name: str, shows: str, key: str, bad: Any, good: dict[str, Any]) -> Example:
    """A ResNet-50 (LARS) run breaking one row; the positive logs the row's value and `good`'s keys."""
    negative = _resnet(**good).set(key, bad)
    return Example(code, name, shows, CHECK_1_0, negative.render(), _resnet(**good).render(), line=negative.line())


def _max_image_size() -> Example:
    negative = closed_run("maskrcnn").set("max_image_size", 600)
    return Example("HP002", "image-size", "Mask R-CNN's max_image_size 600 where the table says 1333, a row the "
                   "reviewers check by hand (MR-5)", CHECK_1_0, negative.render(), closed_run("maskrcnn").render(),
                   line=negative.line())


# A closed GPT-3 run of round 4.0 at batch 2688, where 265*1536/2688 = 151.4 warmup steps: the table's letter
# rounds up (152), NeMo's runs the review accepted log int() (151). fixtures.synth has no GPT-3 values: these are
# TR4.0's closed values and closed_gpt3.yaml's (learning rate 2e-5, its tenth at the end, 2048 tokens, decay
# ceil(108600*1536/2688) steps, the checkpoint at ceil(4000*1536/2688)).
GPT3 = {"global_batch_size": 2688, "max_sequence_length": 2048, "opt_name": "adam", "opt_base_learning_rate": 2e-05,
        "opt_end_learning_rate": 2e-06, "opt_learning_rate_decay_steps": 62058, "opt_learning_rate_warmup_steps": 152,
        "opt_learning_rate_decay_schedule": "cosine with linear warmup", "opt_adam_beta_1": 0.9,
        "opt_adam_beta_2": 0.95, "opt_adam_epsilon": 1e-08, "opt_gradient_clip_norm": 1.0,
        "gradient_accumulation_steps": 1, "init_checkpoint_step": 2286}  # fmt: skip


def _gpt3() -> Log:
    return closed_run("gpt3", "4.0.0", hyperparameters=GPT3, quality=2.68)


def advice() -> list[Example]:
    return [
        _max_image_size(),
        _table("HP001", "momentum", "LARS momentum 0.5 at batch 3264, where 1.0.0's table fixes 0.9 below 32k "
               "(RN-L6a)", "lars_opt_momentum", 0.5, {"global_batch_size": 3264}),
        _table("HP004", "momentum-32k", "LARS momentum 0.95 at batch 32000: between 32000 and 32767 the rules' "
               "\"batch<32k\" reading decides (RN-L6b)", "lars_opt_momentum", 0.95, {"global_batch_size": 32000}),
        pair("HP005", "no-benchmark", "advise on a log that names no benchmark: the closed table cannot apply",
             lambda log: log.drop("submission_benchmark"), ADVISE_1_0),
        _info("HP006", "rcp-named", "advise on a closed BERT log names the RCP at its batch size (an info, at "
              "global_batch_size); the positive names no benchmark, so no RCP", closed_run(),
              closed_run().drop("submission_benchmark")),
        _info("HP008", "rcp-verdict", "advise predicts the RCP verdict of a closed BERT trial (an info, at "
              "global_batch_size); the positive logs no batch size, so there is no verdict", closed_run(),
              closed_run().drop("global_batch_size")),
        _info("HP010", "open-fits-closed", "advise on an open BERT run that closed's table and rules accept (an "
              "info, at submission_division); the positive's gradient_accumulation_steps 0 is refused by the "
              "closed rules", _open_bert(), _open_bert(gradient_accumulation_steps=0), "submission_division"),
        pair("HP009", "warmup-floor", "GPT-3 warmup 151 at batch 2688: the letter says ceil(265*1536/2688) = 152, "
             "NeMo's accepted runs log int() (GP-10); a warning", lambda log: log.set("opt_learning_rate_warmup_steps",
                                                                                      151),
             ["check", "--ruleset", "4.0.0"], _gpt3),
        pair("HP007", "learning-rate", "BERT's opt_base_learning_rate 0.002 where the RCP at batch 448 ran 0.0004",
             lambda log: log.set("opt_base_learning_rate", 0.002), ADVISE_1_0, _rcp_bert),
    ]


def _info(code: str, name: str, shows: str, shown: Log, fixed: Log, at: str = "global_batch_size") -> Example:
    """An advice the negative gets as it is, at the record of `at`; `fixed` is the nearest log without it."""
    return Example(code, name, shows, ADVISE_1_0, shown.render(), fixed.render(), line=shown.find(at) + 1)


def _open_bert(**hyperparameters: Any) -> Log:
    return closed_run(division="open", hyperparameters=hyperparameters)


def _rcp_bert() -> Log:
    return closed_run("bert", hyperparameters={"opt_base_learning_rate": 0.0004,
                                               "opt_learning_rate_training_steps": 8103})
