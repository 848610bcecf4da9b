"""Write example run logs with mlperf-logging's own logger (mllog), for `make demo` and test fixtures.

Runs are deterministic: timestamps come from the spec, not the clock. Defaults give a closed-division run that
passes the installed rules for training 1.0.0 and 1.1.0 (BERT and ResNet-50 with LARS, the two benchmarks
Graphcore submitted); `hyperparameters`, `omit` and `extra` make it break them on purpose.
"""

from __future__ import annotations

import ast
import io
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlperf_logging.mllog.mllog import MLLogger

from mlsubmit.checker.rules.files import get_ruleset

# Closed-compliant values for rounds 1.0/1.1 (TR1.0/TR1.1 "Hyperparameters"); keys as the logs spell them.
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "bert": {
        "global_batch_size": 448,
        "opt_base_learning_rate": 0.002,
        "opt_epsilon": 1e-6,
        "opt_learning_rate_training_steps": 6700,
        "opt_learning_rate_warmup_steps": 0,
        "num_warmup_steps": 0,
        "start_warmup_step": 0,
        "opt_lamb_beta_1": 0.9,
        "opt_lamb_beta_2": 0.999,
        "opt_lamb_weight_decay_rate": 0.01,
        "gradient_accumulation_steps": 1,
    },
    "resnet": {
        "global_batch_size": 3200,
        "opt_name": "lars",
        "lars_opt_base_learning_rate": 10.5,
        "lars_opt_end_learning_rate": 0.0001,
        "lars_opt_learning_rate_decay_poly_power": 2,
        "lars_opt_learning_rate_decay_steps": 37,
        "lars_epsilon": 0.0,
        "lars_opt_learning_rate_warmup_epochs": 2,
        "lars_opt_momentum": 0.9,
        "lars_opt_weight_decay": 5e-05,
        "gradient_accumulation_steps": 1,
    },
    # The other six benchmarks of rounds 1.0/1.1 (values from published closed runs; TR1.0/TR1.1 §Hyperparameters).
    "dlrm": {
        "global_batch_size": 55296,
        "opt_base_learning_rate": 24.0,
        "opt_learning_rate_warmup_steps": 2750,
        "lr_decay_start_steps": 49315,
        "sgd_opt_base_learning_rate": 24.0,
        "sgd_opt_learning_rate_decay_poly_power": 2,
        "sgd_opt_learning_rate_decay_steps": 27772,
        "gradient_accumulation_steps": 1,
    },
    "maskrcnn": {
        "global_batch_size": 96,
        "opt_base_learning_rate": 0.12,
        "opt_learning_rate_warmup_steps": 800,
        "opt_learning_rate_warmup_factor": 0.000133,
        "num_image_candidates": 1000,
        "opt_learning_rate_decay_factor": 0.1,
        "opt_learning_rate_decay_steps": [12000, 16000],
        "min_image_size": 800,
        "max_image_size": 1333,
        "gradient_accumulation_steps": 1,
    },
    "minigo": {
        "train_batch_size": 8192,
        "lr_boundaries": [70000, 110000],
        "lr_rates": [0.32, 0.032, 0.0032],
        "actual_selfplay_games_per_generation": 8192,
        "min_selfplay_games_per_generation": 8192,
        "gradient_accumulation_steps": 1,
    },
    "rnnt": {
        "global_batch_size": 2048,
        "opt_name": "lamb",
        "opt_base_learning_rate": 0.007,
        "opt_lamb_epsilon": 1e-09,
        "opt_lamb_learning_rate_decay_poly_power": 0.939,
        "opt_lamb_learning_rate_hold_epochs": 33,
        "opt_learning_rate_warmup_epochs": 6,
        "opt_weight_decay": 0.001,
        "opt_lamb_beta_1": 0.9,
        "opt_lamb_beta_2": 0.999,
        "opt_gradient_clip_norm": 1,
        "gradient_accumulation_steps": 1,
        "opt_learning_rate_alt_decay_func": True,
        "opt_learning_rate_alt_warmup_func": True,
        "opt_lamb_learning_rate_min": 1e-05,
        "data_train_max_duration": 16.7,
        "data_train_num_buckets": 6,
        "data_speed_perturbaton_min": 0.85,
        "data_speed_perturbaton_max": 1.15,
        "data_spec_augment_freq_n": 2,
        "data_spec_augment_freq_min": 0,
        "data_spec_augment_freq_max": 20,
        "data_spec_augment_time_n": 10,
        "data_spec_augment_time_min": 0,
        "data_spec_augment_time_max": 0.03,
        "model_eval_ema_factor": 0.995,
        "model_weights_initialization_scale": 0.5,
        "eval_max_prediction_symbols": 300,
    },
    "ssd": {
        "global_batch_size": 1024,
        "model_bn_span": 64,
        "opt_learning_rate_warmup_factor": 0,
        "opt_learning_rate_warmup_steps": 577,
        "opt_weight_decay": 0.0005,
        "opt_base_learning_rate": 0.0031,
        "max_samples": 50,
        "opt_learning_rate_decay_boundary_epochs": [40, 50],
        "gradient_accumulation_steps": 1,
    },
    "unet3d": {
        "global_batch_size": 32,
        "opt_name": "sgd",
        "opt_base_learning_rate": 4.0,
        "opt_momentum": 0.9,
        "opt_learning_rate_warmup_epochs": 1000,
        "opt_initial_learning_rate": 0.0001,
        "opt_learning_rate_decay_boundary_epochs": [],
        "opt_learning_rate_decay_factor": 1.0,
        "opt_weight_decay": 0.0,
        "oversampling": 0.4,
        "training_input_shape": [128, 128, 128],
        "validation_input_shape": [128, 128, 128],
        "validation_overlap": 0.5,
        "gradient_accumulation_steps": 1,
    },
}
# Current rounds (6.0/6.1): closed values from the rules' tables and mlperf-logging's training_6.x rule files, at a
# batch size with an RCP (llama2_70b_lora 8, llama31_8b 32, flux1 1024).
HYPERPARAMETERS.update({
    "llama2_70b_lora": {
        "global_batch_size": 8, "opt_base_learning_rate": 0.0004, "opt_learning_rate_training_steps": 1024,
        "opt_gradient_clip_norm": 0.3, "opt_adamw_weight_decay": 0.0001, "gradient_accumulation_steps": 1,
        "lora_alpha": 32, "lora_rank": 16,
    },
    "llama31_8b": {
        "global_batch_size": 32, "max_sequence_length": 8192, "opt_name": "adamw", "opt_base_learning_rate": 0.0008,
        "opt_end_learning_rate": 8e-05, "opt_learning_rate_warmup_steps": 128,
        "opt_learning_rate_decay_steps": 1_199_872, "opt_learning_rate_decay_schedule": "cosine with linear warmup",
        "opt_adamw_beta_1": 0.9, "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-05, "opt_adamw_weight_decay": 0.1,
        "opt_gradient_clip_norm": 1.0, "gradient_accumulation_steps": 1, "max_steps": 1_200_000,
    },
    "flux1": {
        "global_batch_size": 1024, "evaluation_frequency": 262144, "opt_name": "adamw", "opt_adamw_beta_1": 0.9,
        "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-08, "opt_adamw_weight_decay": 0.1,
        "opt_base_learning_rate": 0.00025, "opt_learning_rate_warmup_steps": 800, "opt_gradient_clip_norm": 1.0,
        "gradient_accumulation_steps": 1,
    },
    "gpt_oss_20b": {
        "global_batch_size": 16, "max_sequence_length": 8192, "opt_name": "adamw", "opt_base_learning_rate": 0.0004,
        "opt_end_learning_rate": 4e-05, "opt_learning_rate_warmup_steps": 128,
        "opt_learning_rate_decay_steps": 1_199_872, "opt_learning_rate_decay_schedule": "cosine with linear warmup",
        "opt_adamw_beta_1": 0.9, "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-05, "opt_adamw_weight_decay": 0.1,
        "opt_gradient_clip_norm": 1.0, "gradient_accumulation_steps": 1, "max_steps": 1_200_000,
    },
    "deepseekv3_671b": {  # learning rate 2.4e-05 * sqrt(GBS / 16384); first eval at GBS * floor(42 + 24576 / GBS)
        "global_batch_size": 16384, "max_sequence_length": 4096, "opt_name": "adamw", "opt_base_learning_rate": 2.4e-05,
        "max_steps": 12000, "opt_learning_rate_warmup_steps": 4, "opt_learning_rate_decay_steps": 11996,
        "opt_learning_rate_decay_schedule": "cosine with linear warmup", "opt_adamw_beta_1": 0.9,
        "opt_adamw_beta_2": 0.95, "opt_adamw_epsilon": 1e-08, "opt_adamw_weight_decay": 0.1,
        "opt_gradient_clip_norm": 1.0, "moe_aux_loss_coeff": 0.01, "gradient_accumulation_steps": 256,
    },
})  # fmt: skip
# Keys training 6.1.0's common.yaml makes mandatory (precision, parallelism, run configuration).
COMMON_KEYS: dict[str, dict[str, Any]] = {
    "6.1.0": {
        "lowest_numerical_precision_in_linear": "bfloat16", "lowest_numerical_precision_in_attn": "bfloat16",
        "lowest_numerical_precision_in_comm": "bfloat16", "tensor_parallelism": 1, "pipeline_parallelism": 1,
        "context_parallelism": 1, "expert_parallelism": 1, "micro_batch_size": 1, "config_filename": "config.yaml",
    },
}  # fmt: skip
TARGETS = {"bert": 0.720, "resnet": 0.759, "llama2_70b_lora": 0.925, "llama31_8b": 3.3, "flux1": 0.586,
           "gpt_oss_20b": 3.34, "deepseekv3_671b": 3.6}
SAMPLES = {"bert": (3_000_000, 10_000), "resnet": (1_281_167, 50_000), "llama2_70b_lora": (3901, 173),
           "llama31_8b": (1_200_000 * 32, 1024), "flux1": (1_099_776, 29_696), "gpt_oss_20b": (1_200_000 * 16, 1024),
           "deepseekv3_671b": (12_000 * 16384, 1024)}
# Benchmarks whose evals count samples (`samples_count`), not epochs, and whose quality is a loss (lower is better):
# what mlperf-logging's RCP reader and rule files expect of them.
SAMPLES_COUNTED = frozenset({"llama2_70b_lora", "llama31_8b", "flux1", "gpt_oss_20b", "deepseekv3_671b"})
TARGETS.update({"dlrm": 0.8025, "maskrcnn": 0.377, "minigo": 0.5, "rnnt": 0.058, "ssd": 0.23, "unet3d": 0.908})
SAMPLES.update({"dlrm": (4_195_197_692, 89_137_319), "maskrcnn": (118_287, 5_000), "minigo": (1000, 100),
                "rnnt": (278_528, 2_703), "ssd": (118_287, 5_000), "unet3d": (168, 42)})
LOWER_IS_BETTER = frozenset({"rnnt"}) | SAMPLES_COUNTED  # word error rate; losses and perplexities
SECOND_TARGET = {"maskrcnn": 0.339}  # eval_accuracy is {"BBOX": box AP, "SEGM": mask AP}


@dataclass
class RunSpec:
    benchmark: str = "bert"
    ruleset: str = "1.0.0"
    division: str = "closed"
    org: str = "Graphcore"
    platform: str = "IPU-POD16"
    status: str = "onprem"
    seed: int | None = 42
    start_ms: int = 1_620_000_000_000
    init_minutes: float = 4.0
    minutes: float = 20.0  # run_start to run_stop
    evals: int = 4
    converge: bool = True
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    omit: tuple[str, ...] = ()
    extra: list[tuple[str, Any, dict[str, Any]]] = field(default_factory=list)  # (key, value, metadata) at the end
    raw_output: bool = False  # interleave job output and MPI rank prefixes, as raw job logs have
    crlf: bool = False
    samples: tuple[int, int] | None = None  # (train_samples, eval_samples); None: the benchmark's default
    converge_at: int | None = None  # samples_count of the last eval (SAMPLES_COUNTED benchmarks); None: a default
    first_eval: int | None = None  # samples_count of the first eval; None: an even share of converge_at


class _Writer:
    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.buffer = io.StringIO()
        logger = logging.getLogger(f"mlsubmit.testing.synth.{id(self)}")
        logger.propagate = False
        logger.setLevel(logging.INFO)
        logger.handlers = [logging.StreamHandler(self.buffer)]
        self.logger = logger
        self.mll = MLLogger(logger=logger, default_namespace="")
        self.noise = random.Random(spec.seed or 0)

    def event(self, key: str, value: Any = None, metadata: dict[str, Any] | None = None, *, t: float,
              kind: str = "event") -> None:
        if key in self.spec.omit:
            return
        meta = dict(metadata or {})
        getattr(self.mll, kind)(key=key, value=value, metadata=meta, time_ms=int(t))
        if self.spec.raw_output and self.noise.random() < 0.5:
            self.buffer.write(f"step {self.noise.randint(1, 9999)}: loss={self.noise.uniform(1, 9):.4f}\n")

    def text(self) -> str:
        self.logger.handlers = []
        out = self.buffer.getvalue()
        if self.spec.raw_output:
            out = "".join(
                ("[1,0]<stdout>:" + line if i % 3 == 0 and ":::MLLOG" in line else line)
                for i, line in enumerate(out.splitlines(keepends=True))
            )
        if self.spec.crlf:
            out = out.replace("\n", "\r\n")
        return out


def required_tensors(ruleset: str, benchmark: str) -> list[str]:
    """Tensor names the ruleset's END check expects in weights_initialization records (1.1.0 on)."""
    rs = get_ruleset(ruleset)
    name = f"closed_{benchmark}.yaml"
    if name not in rs.names:
        return []
    for snip in rs.file(name).end_check:
        for node in ast.walk(ast.parse(snip.source, mode="eval")):
            if isinstance(node, ast.List) and node.elts and all(isinstance(e, ast.Constant) for e in node.elts):
                return [str(e.value) for e in node.elts]  # type: ignore[attr-defined]
    return []


def _accuracy(benchmark: str, acc: float, target: float) -> Any:
    """The logged quality: `acc` as is, mirrored around the target for error rates, box and mask AP for Mask R-CNN."""
    if benchmark in LOWER_IS_BETTER:
        return round(2 * target - acc, 5)
    if benchmark in SECOND_TARGET:
        return {"BBOX": round(acc, 5), "SEGM": round(acc - target + SECOND_TARGET[benchmark], 5)}
    return round(acc, 5)


def _eval_meta(spec: RunSpec, epoch: int, params: dict[str, Any]) -> dict[str, Any]:
    """An eval's position: `epoch_num`, or for the samples-counted benchmarks an even share of `converge_at` in
    whole batches of the run's logged global batch size (`params`, what render logs)."""
    if spec.benchmark not in SAMPLES_COUNTED:
        return {"epoch_num": epoch}
    bs = int(params.get("global_batch_size", 1))
    last = spec.converge_at if spec.converge_at is not None else 4 * SAMPLES.get(spec.benchmark, (1000, 0))[0] // 3
    if spec.first_eval is not None and spec.evals > 1:
        step = (last - spec.first_eval) * (epoch - 1) // (spec.evals - 1)
        return {"samples_count": spec.first_eval + step // bs * bs}
    return {"samples_count": max(bs, last * epoch // max(1, spec.evals) // bs * bs)}


def render(spec: RunSpec) -> str:
    w = _Writer(spec)
    t = float(spec.start_ms)
    w.event("cache_clear", True, t=t)
    w.event("init_start", None, t=t, kind="start")
    for key, value in (
        ("submission_org", spec.org),
        ("submission_platform", spec.platform),
        ("submission_division", spec.division),
        ("submission_status", spec.status),
        ("submission_benchmark", spec.benchmark),
    ):
        w.event(key, value, t=t)
    if spec.seed is not None:
        w.event("seed", spec.seed, t=t)
    params = {**COMMON_KEYS.get(spec.ruleset, {}), **HYPERPARAMETERS.get(spec.benchmark, {})}
    params.update(spec.hyperparameters)
    for key, value in params.items():
        w.event(key, value, t=t)
    train, evals = spec.samples or SAMPLES.get(spec.benchmark, (1000, 100))
    w.event("train_samples", train, t=t)
    w.event("eval_samples", evals, t=t)
    for tensor in required_tensors(spec.ruleset, spec.benchmark):
        w.event("weights_initialization", None, {"tensor": tensor}, t=t)
    t += spec.init_minutes * 60_000
    w.event("init_stop", None, t=t, kind="end")
    w.event("run_start", None, t=t, kind="start")
    step = spec.minutes * 60_000 / max(1, spec.evals)
    target = TARGETS.get(spec.benchmark, 0.5)
    for i in range(spec.evals):
        epoch = i + 1
        w.event("block_start", None, {"first_epoch_num": epoch, "epoch_count": 1}, t=t, kind="start")
        w.event("epoch_start", None, {"epoch_num": epoch}, t=t, kind="start")
        t += step
        w.event("epoch_stop", None, {"epoch_num": epoch}, t=t, kind="end")
        w.event("eval_start", None, {"epoch_num": epoch}, t=t, kind="start")
        last = i == spec.evals - 1
        acc = target + 0.004 if (last and spec.converge) else target - 0.05 + 0.01 * i
        w.event("eval_accuracy", _accuracy(spec.benchmark, acc, target), _eval_meta(spec, epoch, params), t=t)
        w.event("eval_stop", None, {"epoch_num": epoch}, t=t, kind="end")
        w.event("block_stop", None, {"first_epoch_num": epoch}, t=t, kind="end")
    for key, value, meta in spec.extra:
        w.event(key, value, meta, t=t)
    w.event("run_stop", None, {"status": "success" if spec.converge else "aborted"}, t=t, kind="end")
    return w.text()


def write_run(path: str | Path, spec: RunSpec | None = None, **changes: Any) -> Path:
    spec = spec or RunSpec()
    for key, value in changes.items():
        setattr(spec, key, value)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render(spec).encode("utf-8"))
    return path
