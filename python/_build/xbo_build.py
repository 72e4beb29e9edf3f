"""The build backend of the xbo Python package (PEP 517 and PEP 660),
written with the standard library only.

Why not setuptools: a build that needs setuptools (and, before setuptools 70,
the wheel package) must download them where they are missing, for instance
in a virtual environment of Python 3.12 or later, and the machines xbo is
built on reach no package index. This backend needs nothing, so

    python3 -m pip install --no-index ./python

installs the package anywhere pip runs, with build isolation or without.

A wheel holds the xbo/ tree (sources and py.typed, no caches) and the
dist-info files (METADATA, WHEEL, RECORD); an editable wheel holds only a .pth
file naming this directory; an sdist holds what a wheel is built from. The
archives' timestamps come from SOURCE_DATE_EPOCH when it is set, so a build
can be reproduced byte for byte.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

NAME = "xbo"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"
SUMMARY = "Client of the xbo tuning service: explainable Bayesian optimization, Optuna-shaped"


def _version():
    with open(os.path.join(ROOT, NAME, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError("xbo/__init__.py sets no __version__")
    return m.group(1)


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def _metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    fields = [
        ("Metadata-Version", "2.1"),
        ("Name", NAME),
        ("Version", _version()),
        ("Summary", SUMMARY),
        ("License", "Apache-2.0"),
        ("Requires-Python", ">=3.9"),
        ("Provides-Extra", "optuna"),
        ("Requires-Dist", 'optuna>=3.1; extra == "optuna"'),
        ("Description-Content-Type", "text/markdown"),
    ]
    return "".join("%s: %s\n" % kv for kv in fields) + "\n" + readme


def _wheel_file():
    return "Wheel-Version: 1.0\nGenerator: xbo_build\nRoot-Is-Purelib: true\nTag: %s\n" % TAG


def _package_files():
    """(path in the archive, path on disk) of the package, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, NAME)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in filenames:
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(dirpath, name)
            out.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return sorted(out)


def _timestamp():
    return int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))


def _zip_time():
    # Zip times start in 1980.
    return time.gmtime(max(_timestamp(), 315532800))[:6]


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (arcname, digest, len(data))


def _write_wheel(directory, entries):
    """A wheel of entries [(path in the archive, bytes)] plus dist-info."""
    info = _dist_info()
    entries = list(entries) + [
        (info + "/METADATA", _metadata().encode("utf-8")),
        (info + "/WHEEL", _wheel_file().encode("utf-8")),
    ]
    record = "".join(_record_line(a, d) for a, d in entries) + info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode("utf-8")))
    filename = "%s-%s-%s.whl" % (NAME, _version(), TAG)
    stamp = _zip_time()
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            zi = zipfile.ZipInfo(arcname, stamp)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return filename


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 ----


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, _dist_info())
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(a, _read(p)) for a, p in _package_files()])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    filename = base + ".tar.gz"
    files = [(a, p) for a, p in _package_files()]
    for extra in ("pyproject.toml", "README.md", "_build/xbo_build.py"):
        files.append((extra, os.path.join(ROOT, extra)))
    pkg_info = _metadata().encode("utf-8")
    stamp = _timestamp()

    def add(tar, arcname, data):
        ti = tarfile.TarInfo(base + "/" + arcname)
        ti.size, ti.mtime, ti.mode = len(data), stamp, 0o644
        tar.addfile(ti, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        add(tar, "PKG-INFO", pkg_info)
        for arcname, path in sorted(files):
            add(tar, arcname, _read(path))
    return filename


# ---- PEP 660: pip install -e ./python ----


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [("_xbo_editable.pth", (ROOT + "\n").encode("utf-8"))])
