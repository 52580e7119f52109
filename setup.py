"""The tenferro Python package through pip, built with CMake (README, "Python"):

    python3 -m venv --system-site-packages v && v/bin/pip install --no-build-isolation .

build_ext configures the project (Ninja, Release, without tests, benchmarks and examples) for the
running interpreter, builds the `_tenferro` target only, installs the CMake component `python`
into a staging directory and copies the package from there into the wheel (the module, its .py
files and the generated _version.py). The wheel is platform-specific (it holds the module).

Environment:
    TENFERRO_CMAKE_BUILD_DIR    the CMake build tree (relative paths: to this directory); default
                                build/pip. A tree that is already configured (build/release) keeps
                                its options: only `_tenferro` is built in it, so nothing is built
                                a second time.
    TENFERRO_CMAKE_NO_BUILD=1   with TENFERRO_CMAKE_BUILD_DIR: package what that tree has built,
                                build nothing (CTest python.pip_wheel).
    CMAKE_BUILD_PARALLEL_LEVEL  parallel build jobs (read by cmake --build).
    CMAKE_ARGS                  further arguments for the configure step (split as a shell would).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent


def project_version():
    """The version of `project(tenferro VERSION x.y.z ...)` in CMakeLists.txt, the only place it is written."""
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    match = re.search(r"^\s*project\(\s*tenferro\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)\b", text, re.MULTILINE)
    if match is None:
        raise RuntimeError("setup.py: no `project(tenferro VERSION ...)` in CMakeLists.txt")
    return match.group(1)


def cmake_build_dir():
    chosen = os.environ.get("TENFERRO_CMAKE_BUILD_DIR")
    return (ROOT / chosen).resolve() if chosen else ROOT / "build" / "pip"


def flag(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "off", "false", "no")


def run(command, **kwargs):
    print("setup.py: " + " ".join(shlex.quote(str(c)) for c in command), flush=True)
    subprocess.check_call([str(c) for c in command], **kwargs)


class CMakeBuildExt(build_ext):
    """Builds tenferro._tenferro with CMake and copies the installed package into build_lib."""

    def run(self):
        if self.inplace:
            raise SystemExit("setup.py: in-place (editable) builds are not supported; build with CMake "
                             "and use PYTHONPATH=<build>/python (README, \"Python\")")
        cmake = shutil.which("cmake") or "cmake"
        build = cmake_build_dir()
        reuse = "TENFERRO_CMAKE_BUILD_DIR" in os.environ and (build / "CMakeCache.txt").exists()
        if flag("TENFERRO_CMAKE_NO_BUILD"):
            if not reuse:
                raise SystemExit(f"setup.py: TENFERRO_CMAKE_NO_BUILD needs TENFERRO_CMAKE_BUILD_DIR naming a "
                                 f"configured and built tree ({build} has no CMakeCache.txt)")
        else:
            if not reuse:
                # Our own tree: configured every time (seconds when nothing changed), so that it
                # follows the interpreter and CMAKE_ARGS.
                run([cmake, "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                     "-DTENFERRO_BUILD_TESTS=OFF", "-DTENFERRO_BUILD_BENCH=OFF", "-DTENFERRO_BUILD_EXAMPLES=OFF",
                     "-DTENFERRO_BUILD_PYTHON=ON", "-DTENFERRO_INSTALL=OFF", f"-DPython_EXECUTABLE={sys.executable}",
                     *shlex.split(os.environ.get("CMAKE_ARGS", ""))])
            if not (build / "python" / "CMakeFiles" / "_tenferro.dir").is_dir():
                raise SystemExit(f"setup.py: {build} has no _tenferro target: is pybind11 missing (Debian: "
                                 "pybind11-dev, python3-dev), or TENFERRO_BUILD_PYTHON off?")
            jobs = []
            if self.parallel and "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
                jobs = ["--parallel", str(self.parallel)]
            run([cmake, "--build", build, "--target", "_tenferro", *jobs])

        # The CMake route's own installation (RPATH of the build tree removed, every file of the
        # package), into a staging directory: DESTDIR also catches an absolute
        # TENFERRO_PYTHON_INSTALL_DIR.
        stage = Path(self.build_temp).resolve() / "cmake-install"
        shutil.rmtree(stage, ignore_errors=True)
        run([cmake, "--install", build, "--component", "python", "--prefix", "/prefix"],
            env=dict(os.environ, DESTDIR=str(stage)))
        found = sorted(stage.rglob("tenferro/__init__.py"))
        if len(found) != 1:
            raise SystemExit(f"setup.py: cmake --install of the python component gave {len(found)} packages under {stage}")
        package = found[0].parent
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        if not (package / ("_tenferro" + suffix)).exists():
            built = ", ".join(p.name for p in package.glob("_tenferro*")) or "nothing"
            raise SystemExit(f"setup.py: {build} built {built}, not _tenferro{suffix} for {sys.executable}")

        target = Path(self.build_lib) / "tenferro"
        target.mkdir(parents=True, exist_ok=True)
        for stale in target.glob("_tenferro*"):
            stale.unlink()
        for file in package.iterdir():
            if file.is_file():
                shutil.copy2(file, target / file.name)
                print(f"setup.py: {file.name} -> {target}", flush=True)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled module: platform-specific (cp311-cp311-linux_x86_64)."""

    def has_ext_modules(self):
        return True


# bdist_wheel builds the wheel, and setuptools' dist_info (pip's metadata step) runs it too. It
# comes from the `wheel` package; a virtual environment made without --system-site-packages has
# none, so Debian's (python3-wheel) is taken from the system's dist-packages for this build step
# only (nothing from there is installed or imported by the package).
if {"bdist_wheel", "dist_info"} & set(sys.argv):
    try:
        import wheel  # noqa: F401
    except ImportError:
        debian = Path("/usr/lib/python3/dist-packages")
        if (debian / "wheel").is_dir():
            sys.path.append(str(debian))
        try:
            import wheel  # noqa: F401,F811
        except ImportError:
            raise SystemExit("setup.py: the `wheel` package is missing (setuptools needs it to build the wheel). "
                             "Offline, use Debian's: apt-get install python3-wheel") from None

# setuptools' own files (build/lib.*, bdist.*, tenferro.egg-info) go beside the CMake tree, none
# into the source tree.
setuptools_dir = cmake_build_dir() / "setuptools"
setuptools_dir.mkdir(parents=True, exist_ok=True)

setup(
    version=project_version(),
    packages=["tenferro"],
    package_dir={"": "python"},
    ext_modules=[Extension("tenferro._tenferro", sources=[])],
    cmdclass={"build_ext": CMakeBuildExt},
    distclass=BinaryDistribution,
    zip_safe=False,
    options={"build": {"build_base": str(setuptools_dir)}, "egg_info": {"egg_base": str(setuptools_dir)}},
)
