"""The ``trajopt`` command line (trajopt.cli): listing, solving, files, warm starts, errors.

Runs :func:`trajopt.cli.main` in-process on small problems (pendulum with 21
knots, quadrotor) and once on go1-trot with a plot, an animation and a replay;
two subprocess runs check ``python -m trajopt.cli``. Usage errors must exit
with code 2 and a one-line message, never a traceback.
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

import problems  # noqa: E402
from trajopt import Solution  # noqa: E402
from trajopt.cli import main  # noqa: E402
from trajopt.cli.arguments import description  # noqa: E402


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``main(argv)`` as a shell would see it: exit code, stdout, stderr."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def pendulum_file(tmp_path_factory):
    """A pendulum solution (N = 21) saved by the CLI, and the summary page it plotted."""
    folder = tmp_path_factory.mktemp("pendulum")
    code = main(["solve", "pendulum", "--N", "21", "--quiet", "--plot", str(folder / "out.png"), "--save", str(folder / "sol.npz")])
    assert code == 0
    return folder


def test_list_names_every_problem_with_its_description(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == problems.names()
    assert any(line.startswith("pendulum") and "hanging to upright" in line for line in lines)
    assert "``" not in out


def one_sentence_problems(text: str) -> list[str]:
    """What keeps ``text`` from being one clean sentence: reST markup, a cut or a second sentence,
    a word doubled where markup was stripped ("landing knots knots"), notes to the reader."""
    problems_found = []
    if not re.fullmatch(r"[A-Z0-9].*[^.]\.", text) or "\n" in text:
        problems_found.append("not one line starting with a capital or digit and ending with one period")
    if re.search(r"[.!?]\s+[A-Z]", text):
        problems_found.append("a second sentence")
    if re.search(r"`|:\w+:", text):
        problems_found.append("reST markup")
    doubled = re.search(r"\b(\w+)\s+\1\b", text, re.IGNORECASE)
    if doubled:
        problems_found.append(f"doubled word {doubled.group(0)!r}")
    if re.search(r"docstring|\bsee\b|\(module", text, re.IGNORECASE):
        problems_found.append("a pointer to other documentation")
    if text.count("(") != text.count(")"):
        problems_found.append("unbalanced parentheses")
    return problems_found


@pytest.mark.parametrize(
    "text, ok",
    [
        ("Go1 trot (module docstring); step is the base displacement per cycle (m); torque_scale", False),
        ("Go1 forward jump: crouch/push-off, flight, landing knots knots; length forward (m).", False),
        ("Pendulum from hanging to upright. Then back.", False),
        ("Hover at ``x``.", False),
        ("Pendulum (m = l = 1) from hanging to upright in 3 s with |torque| <= 5 N m.", True),
    ],
)
def test_sentence_check_itself(text, ok):
    assert (one_sentence_problems(text) == []) == ok


@pytest.mark.parametrize("name", problems.names())
def test_every_description_is_one_clean_sentence(name):
    factory = problems.factory(name)
    text = description(factory)
    assert one_sentence_problems(text) == [], text
    summary = inspect.getdoc(factory).split("\n\n")[0]
    named = [p for p in inspect.signature(factory).parameters if f"``{p}``" in summary]
    assert not named, f"{name}: the summary names parameters {named}; they read as plain words once the quotes go"


def test_list_params_shows_factory_defaults(capsys):
    code, out, _ = run(capsys, "list", "--params")
    assert code == 0
    assert "N=51, tf=3.0, u_max=5.0" in out
    assert "knots=(15, 10, 15)" in out


def test_version_and_help(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("trajopt ")
    code, out, _ = run(capsys, "solve", "--help")
    assert code == 0 and "--warm-start FILE" in out and "trajopt solve go1-trot --plot trot.png --animate trot.gif" in out


def test_solve_pendulum_saves_and_plots(pendulum_file):
    solution = Solution.load(pendulum_file / "sol.npz")
    assert solution.success and solution.N == 21 and solution.problem_name == "pendulum"
    with Image.open(pendulum_file / "out.png") as image:
        assert image.format == "PNG" and image.size[0] > 1000


def test_solve_prints_ipopt_log_and_summary(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "pendulum", "--N", "21", "--print-level", "5")
    assert code == 0
    assert "iter    objective" in out  # IPOPT's iteration table
    summary = out[out.index("pendulum: Solve_Succeeded") :]
    for text in ("iterations", "objective", "max violation", "build time", "solve time", "state at t = tf", "goal"):
        assert text in summary


def test_warm_start_from_saved_file_converges_at_once(capsys, pendulum_file, tmp_path):
    code, out, _ = run(capsys, "solve", "pendulum", "--N", "21", "--quiet", "--warm-start", pendulum_file / "sol.npz", "--save", tmp_path / "again.npz")
    assert code == 0
    again, first = Solution.load(tmp_path / "again.npz"), Solution.load(pendulum_file / "sol.npz")
    assert again.iterations <= 3
    assert abs(again.objective - first.objective) <= 1e-8 * max(1.0, abs(first.objective))


def test_warm_start_with_another_N_is_resampled(capsys, pendulum_file, tmp_path):
    code, out, _ = run(capsys, "solve", "pendulum", "--N", "41", "--quiet", "--warm-start", pendulum_file / "sol.npz", "--save", tmp_path / "fine.npz")
    assert code == 0
    fine = Solution.load(tmp_path / "fine.npz")
    assert fine.success and fine.N == 41


def test_refuses_to_overwrite_without_flag(capsys, pendulum_file):
    png, npz = pendulum_file / "out.png", pendulum_file / "sol.npz"
    before = (png.stat().st_mtime_ns, npz.stat().st_mtime_ns)
    for option, path in (("--plot", png), ("--save", npz)):
        code, out, err = run(capsys, "solve", "pendulum", "--N", "21", "--quiet", option, path)
        assert code == 2
        assert f"{option}: {str(path)!r} exists; pass --overwrite to replace it" in err
        assert "solving" not in out  # refused before solving
    assert (png.stat().st_mtime_ns, npz.stat().st_mtime_ns) == before


def test_overwrite_replaces_files(capsys, tmp_path):
    path = tmp_path / "p.npz"
    path.write_bytes(b"old")
    code, _, _ = run(capsys, "solve", "pendulum", "--N", "11", "--quiet", "--save", path, "--overwrite")
    assert code == 0 and Solution.load(path).N == 11


@pytest.mark.parametrize(
    "argv, message",
    [
        (["solve", "nope"], "unknown problem 'nope'; known problems: acrobot"),
        (["solve", "go1-jump", "--N", "21"], "problem 'go1-jump' takes no --N; its parameters: length=0.2, apex=0.05"),
        (["solve", "pendulum", "-p", "mass=2"], "problem 'pendulum' takes no parameter 'mass'; its parameters: N=51, tf=3.0, u_max=5.0"),
        (["solve", "pendulum", "--N", "abc"], "parameter N: expected a value like the default 51, got 'abc'"),
        (["solve", "go1-jump", "-p", "knots=15,x,15"], "parameter knots: expected a value like the default (15, 10, 15)"),
        (["solve", "pendulum", "-p", "N"], "--param: expected KEY=VALUE, got 'N'"),
        (["solve", "pendulum", "-p", "u_max=none"], "parameter u_max: expected a value like the default 5.0, got 'none'"),  # not Optional
        (["solve", "pendulum", "--N", "21", "-p", "N=31"], "parameter 'N' is given twice"),
        (["solve", "pendulum", "--tf", "-1"], "problem 'pendulum': tf: expected a finite float > 0"),
        (["solve", "pendulum", "-t", "euler"], "transcription: expected one of trapezoidal, hermite_simpson, multiple_shooting"),
        (["solve", "go1-trot", "-t", "multiple_shooting"], "multiple shooting cannot impose the 'inverse' formulation"),
        (["solve", "pendulum", "--warm-start", "missing.npz"], "--warm-start: path: no solution file at 'missing.npz'"),
        (["solve", "pendulum", "--plot", "pendulum.jpg"], "--plot: path: unknown extension '.jpg'"),
        (["solve", "quadrotor", "--animate", "q.gif", "--fps", "0"], "--fps: expected a positive frame rate, got 0.0"),
        (["solve", "pendulum", "--replay"], "--replay: only legged problems can be replayed"),
        (["solve", "pendulum", "--print-level", "13"], "--print-level: expected an int in 0..12"),
    ],
)
def test_usage_errors_exit_2_with_a_message(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())  # nothing written


def test_an_output_the_writer_cannot_make_is_skipped_with_a_warning(capsys, tmp_path):
    """An animation of the pendulum (which the animation writer does not draw): one warning line
    before the solve, the other outputs (its 3D view included) written, the exit status the solve's."""
    files = {name: tmp_path / name for name in ("p.npz", "p.png", "p.gif", "p.html")}
    code, out, err = run(
        capsys, "solve", "pendulum", "--N", "21", "--quiet", "--save", files["p.npz"], "--plot", files["p.png"], "--animate", files["p.gif"], "--html", files["p.html"]
    )
    assert code == 0
    assert err.splitlines() == [
        f"trajopt solve: warning: --animate {files['p.gif']} skipped: no animation for model Pendulum: animate_solution draws rigid bodies "
        "(models.RigidBody) and legged robots (trajopt.legged.LeggedProblem)",
    ]
    assert files["p.npz"].is_file() and files["p.png"].is_file() and f"wrote {files['p.png']}" in out
    assert not files["p.gif"].exists() and files["p.html"].stat().st_size > 10_000
    # the option is still checked as a usage error first: a wrong extension stops before solving
    code, _, err = run(capsys, "solve", "pendulum", "--N", "21", "--quiet", "--animate", tmp_path / "p.avi")
    assert code == 2 and "--animate: path: unknown extension '.avi'" in err


def test_warm_start_from_another_problem_size_is_refused(capsys, pendulum_file):
    code, _, err = run(capsys, "solve", "quadrotor", "--warm-start", pendulum_file / "sol.npz")
    assert code == 2
    assert "holds (states, controls) of sizes (2, 1), problem 'quadrotor' has (13, 4)" in err


def test_argparse_errors_exit_2(capsys):
    code, _, err = run(capsys, "solve")
    assert code == 2 and "NAME" in err
    code, _, err = run(capsys, "solve", "pendulum", "--bogus")
    assert code == 2 and "--bogus" in err


def test_failed_solve_exits_1_and_still_writes(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "quadrotor", "--quiet", "--max-iter", "2", "--save", tmp_path / "q.npz", "--plot", tmp_path / "q.png")
    assert code == 1
    last = Solution.load(tmp_path / "q.npz")
    assert f"Maximum_Iterations_Exceeded (FAILED; most violated: {last.worst_violation})" in out
    assert not last.success and last.iterations == 2
    assert (tmp_path / "q.png").stat().st_size > 0


def test_go1_trot_plot_animation_and_replay(capsys, tmp_path):
    code, out, _ = run(capsys, "solve", "go1-trot", "--quiet", "--replay", "--fps", 15, "--plot", tmp_path / "trot.png", "--animate", tmp_path / "trot.gif")
    assert code == 0
    assert "FL_foot  #" in out and "replay drift over 31 knots" in out
    fps = 100 / 7  # 15 fps asked: GIF frame delays are whole hundredths of a second, 7/100 s is the nearest
    frames = int(np.floor(0.6 * fps + 1e-9)) + 1
    assert f"animating {tmp_path / 'trot.gif'}: {frames} frames at 14.29 fps" in out
    assert f"wrote {tmp_path / 'trot.gif'} ({frames} frames at 14.29 fps, " in out
    with Image.open(tmp_path / "trot.gif") as gif:
        assert gif.n_frames == frames and gif.info["duration"] == 70
    with Image.open(tmp_path / "trot.png") as png:
        assert png.format == "PNG"


def test_python_dash_m(tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    listed = subprocess.run([sys.executable, "-m", "trajopt.cli", "list"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert listed.returncode == 0 and "pendulum" in listed.stdout
    bad = subprocess.run([sys.executable, "-m", "trajopt.cli", "solve", "nope"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.startswith("trajopt solve: error: unknown problem 'nope'; known problems: acrobot, ")
    assert len(bad.stderr.strip().splitlines()) == 1


def test_solve_compiled_and_with_fatrop(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TRAJOPT_CACHE", str(tmp_path / "cache"))
    code, out, _ = run(capsys, "solve", "pendulum", "--N", "11", "--quiet", "--compile")
    assert code == 0 and "Solve_Succeeded" in out
    code, out, _ = run(capsys, "solve", "cartpole", "--quiet", "--solver", "fatrop", "-t", "multiple_shooting")
    assert code == 0 and "Success" in out
    code, _, err = run(capsys, "solve", "quadrotor", "--quiet", "--solver", "fatrop")
    assert code == 2 and "fatrop" in err


def test_none_is_given_to_an_optional_parameter_only():
    """``-p KEY=none`` clears a parameter annotated Optional (go1-gap's shank clearance, default 0.01 m), whatever its default."""
    from argparse import Namespace

    from trajopt.cli.arguments import parse_parameters

    args = Namespace(N=None, tf=None, param=["link_clearance=none", "control_rate=None", "width=0.25"], robot=None, urdf=None, feet=None)
    assert parse_parameters("go1-gap", args) == {"link_clearance": None, "control_rate": None, "width": 0.25}
    assert "shanks above the terrain" not in [c.name for c in problems.get("go1-gap", link_clearance=None).constraints]
    assert "shanks above the terrain" in [c.name for c in problems.get("go1-gap").constraints]
    with pytest.raises(TypeError, match="width"):
        problems.get("go1-gap", width=None)
