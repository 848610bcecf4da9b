"""Write a round-sized submission tree for `make bench` and the secret-scan tests: organisations with systems/,
results/ (logs written by mlperf_logging.mllog through fixtures.synth) and benchmarks/ holding implementation
code.

At scale 1.0: about 13,000 implementation files and 800 MB of them: Python, shell, C/C++/CUDA, YAML, JSON and
Markdown, vendored third-party libraries, build artefacts (.o, .so), notebooks, minified JavaScript, huge
single-line data files (past the secret scan's size limit), plus one planted secret of every kind detect-secrets'
plugins know (several formats: code, YAML, INI, .env, .npmrc, PEM, a notebook) and one allow-listed secret that must
not be reported. Logs: about 800 runs (each benchmark's five runs rendered once, copied to every system).

    python tools/gen_round.py OUT [--scale 0.01] [--seed 14]

prints a JSON summary (files, bytes, logs, planted secrets). Same seed and scale, same bytes.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RULESET = "4.0.0"
BENCHMARKS = ("bert", "resnet", "dlrm_dcnv2", "ssd")
ALNUM = string.ascii_letters + string.digits
FULL_FILES = 13_000
FULL_BYTES = 800 * 1024 * 1024

# kind: (share of files, (smallest, largest) size in bytes, binary)
KINDS: dict[str, tuple[float, tuple[int, int], bool]] = {
    "py": (0.36, (1_500, 14_000), False),
    "sh": (0.08, (400, 4_000), False),
    "cc": (0.12, (3_000, 22_000), False),
    "h": (0.10, (1_000, 9_000), False),
    "cu": (0.04, (3_000, 20_000), False),
    "yaml": (0.05, (300, 3_000), False),
    "json": (0.03, (500, 8_000), False),
    "md": (0.06, (500, 6_000), False),
    "ipynb": (0.02, (20_000, 250_000), False),
    "min.js": (0.005, (200_000, 1_500_000), False),
    "o": (0.09, (20_000, 400_000), True),
    "so": (0.035, (200_000, 4_000_000), True),
    "huge.txt": (0.005, (3_000_000, 9_000_000), False),  # one line, past the secret scan's 2 MB limit
}


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    sig = base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip("=")
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': _rand(rng, 8), 'iat': 1700000000})}.{sig}"


def planted(rng: random.Random) -> list[tuple[str, str, str]]:
    """(file name, text, secret type as detect-secrets names it): one of every plugin's kind."""
    hexd, low = "0123456789abcdef", string.ascii_lowercase + string.digits
    b64 = ALNUM + "+/"
    return [
        ("artifactory.py", f'ARTIFACTORY = "AKC{_rand(rng, 70)}"\n', "Artifactory Credentials"),
        ("aws.py", f'aws_access_key_id = "AKIA{_rand(rng, 16, string.ascii_uppercase + string.digits)}"\n',
         "AWS Access Key"),
        ("storage.cfg", f"[azure]\nconn = DefaultEndpointsProtocol=https;AccountKey={_rand(rng, 86, b64)}==\n",
         "Azure Storage Account access key"),
        ("fetch.sh", f"git clone https://builder:{_rand(rng, 12)}@git.example.com/r.git\n", "Basic Auth Credentials"),
        ("cloudant.py", f'cloudant_password = "{_rand(rng, 64, hexd)}"\n', "Cloudant Credentials"),
        ("discord.py", f'BOT = "M{_rand(rng, 23)}.{_rand(rng, 6)}.{_rand(rng, 27)}"\n', "Discord Bot Token"),
        ("gh.py", f'GH = "ghp_{_rand(rng, 36)}"\n', "GitHub Token"),
        ("gl.py", f'GL = "glpat-{_rand(rng, 20)}"\n', "GitLab Token"),
        ("iam.py", f'ibm_cloud_iam_api_key = "{_rand(rng, 44, ALNUM + "_-")}"\n', "IBM Cloud IAM Key"),
        ("cos.py", f'ibm_cos_hmac_secret_access_key = "{_rand(rng, 48, hexd)}"\n', "IBM COS HMAC Credentials"),
        ("jwt.py", f'TOKEN = "{_jwt(rng)}"\n', "JSON Web Token"),
        ("settings.yaml", f"database:\n  password: {_rand(rng, 14)}\n", "Secret Keyword"),
        ("deploy.env", f"DB_PASSWORD={_rand(rng, 16)}\n", "Secret Keyword"),
        ("mail.py", f'MC = "{_rand(rng, 32, low)}-us12"\n', "Mailchimp Access Key"),
        (".npmrc", f"//registry.npmjs.org/:_authToken=npm_{_rand(rng, 36)}\n", "NPM tokens"),
        ("openai.py", f'OPENAI = "sk-{_rand(rng, 20)}T3BlbkFJ{_rand(rng, 20)}"\n', "OpenAI Token"),
        ("id_rsa.pem", f"-----BEGIN RSA PRIVATE KEY-----\n{_rand(rng, 64, b64)}\n-----END RSA PRIVATE KEY-----\n",
         "Private Key"),
        ("pypirc.py", f'PYPI = "pypi-AgEIcHlwaS5vcmc{_rand(rng, 80, ALNUM + "-_")}"\n', "PyPI Token"),
        ("sendgrid.py", f'SG = "SG.{_rand(rng, 22)}.{_rand(rng, 43)}"\n', "SendGrid API Key"),
        ("slack.py", f'SLACK = "xoxb-{rng.randrange(10**11, 10**12)}-{_rand(rng, 24, low)}"\n', "Slack Token"),
        ("softlayer.py", f'softlayer_api_key = "{_rand(rng, 64, low)}"\n', "SoftLayer Credentials"),
        ("square.py", f'SQ = "sq0csp-{_rand(rng, 43)}"\n', "Square OAuth Secret"),
        ("stripe.py", f'STRIPE = "sk_live_{_rand(rng, 24)}"\n', "Stripe Access Key"),
        ("telegram.py", f'TG = "{rng.randrange(10**8, 10**9)}:{_rand(rng, 35)}"\n', "Telegram Bot Token"),
        ("twilio.py", f'TW = "AC{_rand(rng, 32, low)}"\n', "Twilio API Key"),
        ("notebook.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": [
            f'GH = "ghp_{_rand(rng, 36)}"\n']}], "nbformat": 4}, indent=1) + "\n", "GitHub Token"),
        ("allowed.py", f'password = "{_rand(rng, 16)}"  # pragma: allowlist secret\n', ""),  # never reported
    ]  # fmt: skip


def _pools(rng: random.Random) -> dict[str, list[str]]:
    """Lines each kind of text file is made of: mostly plain code, and about one line in fifty with the words the
    secret detectors look for (key, token, password, secret) in harmless places, so the pre-filter has
    candidates to reject."""
    names = ["x", "batch", "lr", "step", "loss", "grad", "model", "layer", "weight", "bias", "shape", "dim", "rank",
             "world", "device", "stream", "buf", "idx", "offset", "scale", "eps", "mask", "logits", "labels"]

    def ident() -> str:
        return rng.choice(names) + "_" + _rand(rng, 5, string.ascii_lowercase)

    kwargs = ["dim", "axis", "dtype", "device", "name", "out", "key"]
    py = [f"    {ident()} = {ident()}({rng.randrange(999)}, {rng.choice(kwargs)}={ident()!r})" for _ in range(400)]
    py += ["import torch", "    tokenizer = AutoTokenizer.from_pretrained(args.model)", "def main(argv):",
           '    api_key = os.environ["API_KEY"]', "    password = getpass.getpass()", "    return loss.item()",
           "# Copyright (c) 2024, NVIDIA CORPORATION. All rights reserved.", "    print(f'step {step}: {loss:.4f}')"]
    c = [f"  {ident()} = {ident()}[{rng.randrange(64)}] * {rng.random():.5f}f;" for _ in range(400)]
    c += ["#include <cuda_runtime.h>", "template <typename T>", "}  // namespace", "  const char* key = argv[1];"]
    sh = [f"export {ident().upper()}={rng.randrange(10**6)}" for _ in range(100)]
    sh += ["set -euo pipefail", 'cd "$(dirname "$0")"', "python train.py --config ${CONFIG} --seed ${SEED}"]
    yaml = [f"  {ident()}: {rng.random():.4f}" for _ in range(100)] + ["model:", "optimizer:", "  name: lamb"]
    md = [f"{ident()} {ident()} {ident()}." for _ in range(100)] + ["## Running", "```bash", "```"]
    return {"py": py, "sh": sh, "cc": c, "h": c, "cu": c, "yaml": yaml, "md": md}


def _text(rng: random.Random, kind: str, size: int, pools: dict[str, list[str]]) -> bytes:
    if kind == "json":
        return json.dumps({f"k{i}": rng.random() for i in range(max(1, size // 24))}, indent=1).encode()
    if kind == "ipynb":
        cells = [{"cell_type": "code", "source": rng.choices(pools["py"], k=20)} for _ in range(max(1, size // 900))]
        return json.dumps({"cells": cells, "nbformat": 4}, indent=1).encode()
    if kind == "min.js":
        words = [f"var {_rand(rng, 3)}=function(e,t){{return e+t*{rng.randrange(99)}}};" for _ in range(500)]
        return "".join(rng.choices(words, k=size // 40)).encode()
    if kind == "huge.txt":
        words = [_rand(rng, rng.randrange(3, 12), string.ascii_lowercase) for _ in range(2000)]
        return ",".join(rng.choices(words, k=size // 8)).encode()
    lines = pools[kind]
    return ("\n".join(rng.choices(lines, k=max(1, size // 40))) + "\n").encode()


def _binary(rng: random.Random, size: int, block: bytes) -> bytes:
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x01\x00" + rng.randbytes(46)  # ET_REL, little-endian
    return (head + block * (size // len(block) + 1))[:size]


def _files(rng: random.Random, count: int, budget: int) -> list[tuple[str, int]]:
    """(kind, size) for `count` files; binary sizes are scaled so the total comes near `budget` bytes."""
    kinds, weights = list(KINDS), [KINDS[k][0] for k in KINDS]
    picked = rng.choices(kinds, weights=weights, k=count)
    sizes = [rng.randrange(*KINDS[k][1]) for k in picked]
    text = sum(s for k, s in zip(picked, sizes, strict=True) if not KINDS[k][2])
    binary = sum(s for k, s in zip(picked, sizes, strict=True) if KINDS[k][2]) or 1
    factor = max(0.05, (budget - text) / binary)
    return [(k, int(s * factor) if KINDS[k][2] else s) for k, s in zip(picked, sizes, strict=True)]


def _logs(org: Path, systems: list[str], rng: random.Random, runs_per: int) -> int:
    from fixtures.synth import RunSpec, render
    from fixtures.synth_org import system

    def one(bench: str, i: int) -> str:
        return render(RunSpec(benchmark=bench, ruleset=RULESET, org=org.name, platform="pod", evals=250,
                              seed=rng.randrange(10**6), minutes=30 + i))  # fmt: skip

    rendered = {b: [one(b, i) for i in range(runs_per)] for b in BENCHMARKS}
    count = 0
    for sysname in systems:
        (org / "systems").mkdir(parents=True, exist_ok=True)
        desc = system(submitter=org.name, system_name=sysname)
        (org / "systems" / f"{sysname}.json").write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")
        for bench, texts in rendered.items():
            folder = org / "results" / sysname / bench
            folder.mkdir(parents=True, exist_ok=True)
            for i, text in enumerate(texts):
                (folder / f"result_{i}.txt").write_text(text, encoding="utf-8")
                count += 1
    return count


def write_round(out: Path, *, scale: float = 1.0, seed: int = 14, runs: int = 5) -> dict[str, Any]:
    """`runs`: result logs per benchmark and system (5, a full set; the secret-scan test asks for 1)."""
    rng = random.Random(seed)
    pools = _pools(rng)
    block = rng.randbytes(1 << 16)
    orgs = max(1, round(8 * scale ** 0.5))
    per_org = max(len(planted(rng)) + 4, round(FULL_FILES * scale / orgs))
    summary: dict[str, Any] = {"orgs": orgs, "files": 0, "bytes": 0, "logs": 0, "planted": []}
    for o in range(orgs):
        org = out / f"Org{o:02d}"
        systems = [f"sys{s}" for s in range(max(1, round(5 * scale ** 0.5)))]
        summary["logs"] += _logs(org, systems, rng, runs)
        impl = org / "benchmarks"
        for n, (kind, size) in enumerate(_files(rng, per_org, int(FULL_BYTES * scale / orgs))):
            bench = BENCHMARKS[n % len(BENCHMARKS)]
            where = "third_party/" + rng.choice(["apex", "cutlass", "nccl", "transformers"]) if n % 3 == 0 else "src"
            path = impl / bench / "implementations" / systems[n % len(systems)] / where / f"m{n:05d}.{kind}"
            path.parent.mkdir(parents=True, exist_ok=True)
            data = _binary(rng, size, block) if KINDS[kind][2] else _text(rng, kind, size, pools)
            path.write_bytes(data)
            summary["files"] += 1
            summary["bytes"] += len(data)
        for name, text, kind in planted(rng):
            path = impl / BENCHMARKS[0] / "implementations" / systems[0] / "deploy" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            summary["files"] += 1
            summary["bytes"] += len(text)
            if kind:
                summary["planted"].append([str(path.relative_to(out)), kind])
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures (tests/fixtures/)
    print(json.dumps(write_round(args.out, scale=args.scale, seed=args.seed), sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
