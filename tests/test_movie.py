"""Fast animation writing (trajopt.plotting.movie): frame rates a GIF can play, blitting that draws
what a full redraw draws, exact GIF colours, MP4 through imageio-ffmpeg, the progress line."""
from __future__ import annotations

import io

import imageio_ffmpeg
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

from trajopt.plotting.animation import animate_rigid_body  # noqa: E402
from trajopt.plotting.movie import PaletteMap, frame_rate, gif_palette, render_frames, write_movie  # noqa: E402


@pytest.mark.parametrize(
    "path, fps, expected",
    [
        ("a.gif", None, 20.0),  # 5/100 s a frame
        ("a.gif", 30, 100 / 3),  # 3/100 s: GIF delays are whole hundredths
        ("a.GIF", 15, 100 / 7),
        ("a.gif", 100, 50.0),  # at least 2/100 s (browsers slow shorter delays down)
        ("a.gif", 0.5, 0.5),
        ("a.mp4", None, 30.0),
        ("a.mp4", 24, 24.0),
    ],
)
def test_frame_rate(path, fps, expected):
    assert frame_rate(path, fps) == pytest.approx(expected, rel=1e-12)
    assert frame_rate(path, frame_rate(path, fps)) == pytest.approx(expected, rel=1e-12)  # a playable rate stays


@pytest.mark.parametrize("fps", [0, -1, float("nan"), float("inf")])
def test_frame_rate_refuses_bad_rates(fps):
    with pytest.raises(ValueError, match="fps: expected a positive frame rate"):
        frame_rate("a.gif", fps)


def moving_dot_figure() -> tuple:
    """A 3D figure with a fixed camera: a static helix and a moving dot on it with a title."""
    fig = Figure(figsize=(3, 3), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    s = np.linspace(0, 4 * np.pi, 200)
    ax.plot(np.cos(s), np.sin(s), s / 10, color="0.6")
    dot = ax.plot([], [], [], "o", color="tab:red")[0]
    ax.set_xlim(-1, 1), ax.set_ylim(-1, 1), ax.set_zlim(0, 1.3)
    ax.set_title(" ")

    def draw(k: int) -> None:
        dot.set_data_3d([np.cos(k / 3)], [np.sin(k / 3)], [k / 30])
        ax.title.set_text(f"frame {k}")

    return fig, draw, [dot, ax.title]


def count_full_draws(fig: Figure) -> list:
    """Make ``fig`` count its whole-figure draws in the returned list."""
    calls, draw = [], fig.draw
    fig.draw = lambda renderer: (calls.append(1), draw(renderer))[1]
    return calls


def test_blitting_draws_what_a_full_redraw_draws():
    fig, draw, animated = moving_dot_figure()
    full_draws = count_full_draws(fig)
    full = list(render_frames(fig, draw, range(6)))
    fig, draw, animated = moving_dot_figure()
    blit_draws = count_full_draws(fig)
    blitted = list(render_frames(fig, draw, range(6), animated))
    for a, b in zip(full, blitted):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(blitted[0], blitted[5])  # the frames move
    assert len(full_draws) == 6 and len(blit_draws) == 2  # blitting: the static part drawn once (and the layout)


def test_palette_map_is_exact_and_nearest():
    palette = np.array([[255, 255, 255], [252, 252, 252], [0, 0, 0], [200, 30, 40]], dtype=np.uint8)
    rgb = np.array([[[255, 255, 255], [252, 252, 252], [1, 2, 3], [190, 40, 40], [254, 254, 254]]], dtype=np.uint8)
    index = np.asarray(PaletteMap(palette)(rgb))
    # nearest colour by brute force, written out here
    expected = [int(np.argmin(((palette.astype(int) - c.astype(int)) ** 2).sum(axis=1))) for c in rgb[0]]
    assert index[0].tolist() == expected == [0, 1, 2, 3, 0]
    # Pillow's own mapping to a given palette is approximate: white lands on 252 (why PaletteMap exists)
    pillow = Image.fromarray(rgb).quantize(palette=PaletteMap(palette)(rgb), dither=Image.Dither.NONE)
    assert np.asarray(pillow)[0, 0] == 1


def test_gif_holds_the_rendered_frames(tmp_path):
    """Each GIF frame is the rendered frame mapped to one palette of the first, middle and last
    frames: their most frequent colours (background, panes, lines) exact, the anti-aliased rest
    to the nearest of a median cut."""
    fig, draw, animated = moving_dot_figure()
    path = write_movie(fig, draw, 8, tmp_path / "dot.gif", frame_rate("dot.gif"), animated)
    fig, draw, animated = moving_dot_figure()
    rendered = list(render_frames(fig, draw, range(8), animated))
    palette = gif_palette([rendered[0], rendered[4], rendered[7]])
    assert len(palette) == 255  # this figure has 305 colours
    to_palette = PaletteMap(palette)
    with Image.open(path) as gif:
        assert gif.n_frames == 8 and gif.info["duration"] == 50 and gif.info["loop"] == 0
        for k, frame in enumerate(rendered):
            gif.seek(k)
            decoded = np.asarray(gif.convert("RGB"))
            np.testing.assert_array_equal(decoded, np.asarray(to_palette(frame).convert("RGB")))
            assert np.mean(np.any(decoded != frame, axis=2)) < 0.01 and np.abs(decoded.astype(int) - frame).mean() < 0.1
            colors, counts = np.unique(frame.reshape(-1, 3), axis=0, return_counts=True)
            for color in colors[np.argsort(-counts)[:20]]:  # the frequent colours come back exactly
                assert (decoded[np.all(frame == color, axis=2)] == color).all()


def test_animation_plays_in_real_time(tmp_path):
    t = np.linspace(0.0, 1.0, 11)
    positions = np.column_stack([t, np.zeros_like(t), 0.5 * t])
    quats = np.tile([1.0, 0.0, 0.0, 0.0], (t.size, 1))
    gif = animate_rigid_body(t, positions, quats, tmp_path / "a.gif")  # default 20 fps
    with Image.open(gif) as im:
        durations = []
        for k in range(im.n_frames):
            im.seek(k)
            durations.append(im.info["duration"])
    assert durations == [50] * 21  # 0, 0.05, ..., 1 s
    mp4 = animate_rigid_body(t, positions, quats, tmp_path / "a.mp4")  # default 30 fps
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(mp4))
    assert frames == 31 and seconds == pytest.approx(31 / 30, abs=0.02)


def test_progress_lines(tmp_path):
    fig, draw, animated = moving_dot_figure()
    stream = io.StringIO()  # not a terminal: a first and a last line
    path = tmp_path / "dot.mp4"
    write_movie(fig, draw, 5, path, 30.0, animated, progress=stream)
    first, last = stream.getvalue().splitlines()
    assert first == f"animating {path}: 5 frames at 30 fps"
    assert last.startswith(f"wrote {path} (5 frames at 30 fps, ") and last.endswith(" s)")
    assert not list(tmp_path.glob(".*partial*"))  # the temporary file was renamed
