"""Frames of a matplotlib figure rendered fast and encoded as GIF (pillow) or MP4 (H.264, ffmpeg).

:func:`write_movie` renders ``n`` frames of a figure with Agg and encodes them
while they come:

- the layout (constrained) is computed once, at the first frame, then frozen:
  later frames neither pay for it nor jitter when tick labels change;
- with ``animated`` artists (a fixed camera), the static part of the figure is
  drawn once and each frame redraws only those artists over it (blitting);
  without (the camera moves), each frame is drawn whole;
- GIF: every frame is mapped, without dithering, to one 255-colour palette
  made from the first, middle and last frames (their most frequent colours
  exactly, a median cut of the others), and pillow writes the file
  (it stores only the region that changed between frames); MP4: the frames
  are piped to the ffmpeg binary shipped by imageio-ffmpeg (libx264,
  yuv420p), nothing kept in memory.

GIF delays are whole hundredths of a second, so a GIF plays at
``100 / round(100 / fps)`` frames per second (:func:`frame_rate`: 20 fps by
default, exactly real time; 30 fps would be stored as 33.3). MP4 plays at any
rate (30 fps by default).

It replaces matplotlib's ``PillowWriter`` and ``FFMpegWriter``, which were
several times slower on the same figure. Design notes, with the timings:
docs/design/viewer.md.
"""
from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence, TextIO

import imageio_ffmpeg
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from ..atomic_file import atomic_output

#: Default frame rates (frames per second) by extension.
DEFAULT_FRAME_RATES = {".gif": 20.0, ".mp4": 30.0}
#: Shortest GIF frame delay, in hundredths of a second (browsers slow shorter ones down to 0.1 s).
MIN_GIF_DELAY = 2
#: Colours of a GIF's palette (one of the 256 indices marks colours not mapped yet, :class:`PaletteMap`).
GIF_COLORS = 255
#: Colours of the palette taken exactly from the sample frames (the most frequent ones).
EXACT_COLORS = 128


def frame_rate(path: str | Path, fps: Optional[float] = None) -> float:
    """The frame rate an animation in ``path`` is rendered and played at: ``fps`` (default
    :data:`DEFAULT_FRAME_RATES` by extension), for a GIF rounded to a whole number of hundredths
    of a second per frame (``20 -> 20``, ``30 -> 33.33``, ``15 -> 14.29``; at most 50)."""
    suffix = Path(path).suffix.lower()
    if fps is None:
        fps = DEFAULT_FRAME_RATES.get(suffix, DEFAULT_FRAME_RATES[".mp4"])
    if not (isinstance(fps, (int, float)) and np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps: expected a positive frame rate, got {fps}")
    if suffix == ".gif":
        return 100.0 / max(MIN_GIF_DELAY, round(100.0 / fps))
    return float(fps)


class FrameProgress:
    """``animating PATH: frame k/n`` rewritten in place on a terminal (at most every 0.2 s), and one
    closing line ``wrote PATH (n frames at F fps, S MB, T s)``; nothing when ``stream`` is None."""

    def __init__(self, path: Path, n_frames: int, fps: float, stream: Optional[TextIO]) -> None:
        self.path, self.n, self.fps, self.stream = path, n_frames, fps, stream
        self.start = self._last = time.perf_counter()
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        if stream is not None:
            stream.write(f"animating {path}: {n_frames} frames at {fps:.4g} fps" + ("" if self._tty else "\n"))
            stream.flush()

    def update(self, k: int) -> None:
        """Frame ``k`` (0-based) is done."""
        now = time.perf_counter()
        if self._tty and now - self._last >= 0.2:
            self.stream.write(f"\ranimating {self.path}: frame {k + 1}/{self.n}\x1b[K")
            self.stream.flush()
            self._last = now

    def close(self) -> None:
        """The closing line, once the file is in place."""
        if self.stream is None:
            return
        size = self.path.stat().st_size / 1e6
        line = f"wrote {self.path} ({self.n} frames at {self.fps:.4g} fps, {size:.1f} MB, {time.perf_counter() - self.start:.1f} s)"
        self.stream.write(f"\r{line}\x1b[K\n" if self._tty else f"{line}\n")
        self.stream.flush()


def render_frames(fig: Figure, draw_frame: Callable[[int], None], frames: Sequence[int], animated: Sequence[Artist] = ()) -> Iterator[np.ndarray]:
    """RGB images (H, W, 3) uint8 of ``fig`` after ``draw_frame(k)`` for each ``k`` of ``frames``.

    ``draw_frame(k)`` must set the figure to frame ``k`` whatever frame was
    drawn before. The layout is computed at the first frame and then frozen.
    With ``animated`` artists (all that ``draw_frame`` changes), the rest is
    drawn once and only they are redrawn per frame (blitting); this requires
    a camera and axis limits that ``draw_frame`` leaves alone.
    """
    canvas = FigureCanvasAgg(fig)
    background = None
    for i, k in enumerate(frames):
        draw_frame(k)
        if background is None:
            canvas.draw()
            if i == 0:
                fig.set_layout_engine("none")
            if animated:
                for artist in animated:
                    artist.set_animated(True)
                canvas.draw()
                background = canvas.copy_from_bbox(fig.bbox)
        if background is not None:
            canvas.restore_region(background)
            for artist in animated:
                fig.draw_artist(artist)
        yield np.asarray(canvas.buffer_rgba())[..., :3].copy()


def _rgb_keys(rgb: np.ndarray) -> np.ndarray:
    """Each pixel of ``rgb`` (..., 3) uint8 as one integer ``r 2^16 + g 2^8 + b``."""
    rgb = rgb.astype(np.int32)
    return (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]


def gif_palette(samples: Sequence[np.ndarray]) -> np.ndarray:
    """At most :data:`GIF_COLORS` colours (K, 3) uint8 for frames like ``samples`` (RGB images).

    Every colour of the samples when they have no more; else their
    :data:`EXACT_COLORS` most frequent colours exactly (the background, the
    panes, the lines: a figure is mostly flat colours) and a median cut of
    the other pixels (the anti-aliased edges) for the rest.
    """
    pixels = np.concatenate([s.reshape(-1, 3) for s in samples])
    colors, first, counts = np.unique(_rgb_keys(pixels), return_index=True, return_counts=True)
    if colors.size <= GIF_COLORS:
        return pixels[first]
    frequent = np.argsort(-counts, kind="stable")[:EXACT_COLORS]
    rest = pixels[~np.isin(_rgb_keys(pixels), colors[frequent])]
    cut = Image.fromarray(rest[None, :, :]).quantize(GIF_COLORS - EXACT_COLORS, method=Image.Quantize.MEDIANCUT)
    return np.concatenate([pixels[first[frequent]], np.reshape(cut.getpalette()[: 3 * (GIF_COLORS - EXACT_COLORS)], (-1, 3))]).astype(np.uint8)


class PaletteMap:
    """Frames mapped to the nearest colour (Euclidean in RGB) of a fixed ``palette`` (K, 3), K <= 255.

    A lookup table over all 2^24 colours (16 MB) is filled as colours appear,
    so a frame costs one table lookup per pixel. (Pillow's own mapping to a
    given palette is approximate: it turns white into (252, 252, 252).)
    """

    UNKNOWN = 255  # table entry of a colour not met yet (so the palette has at most 255 colours)

    def __init__(self, palette: np.ndarray) -> None:
        if len(palette) > self.UNKNOWN:
            raise ValueError(f"palette: expected at most {self.UNKNOWN} colours, got {len(palette)}")
        self.palette = np.asarray(palette, dtype=np.uint8)
        self.table = np.full(1 << 24, self.UNKNOWN, dtype=np.uint8)

    def __call__(self, rgb: np.ndarray) -> Image.Image:
        """``rgb`` (H, W, 3) uint8 as a palette image."""
        keys = _rgb_keys(rgb)
        index = self.table[keys]
        new = index == self.UNKNOWN
        if new.any():
            colors = np.unique(keys[new])
            values = np.stack([colors >> 16, (colors >> 8) & 255, colors & 255], axis=1)
            distance = ((values[:, None, :] - self.palette[None, :, :].astype(np.int32)) ** 2).sum(axis=2)
            self.table[colors] = distance.argmin(axis=1)
            index = self.table[keys]
        image = Image.fromarray(index, mode="P")
        image.putpalette(self.palette.reshape(-1).tolist())
        return image


def _write_gif(images: Iterator[np.ndarray], palette: np.ndarray, tmp: Path, fps: float, progress: FrameProgress) -> None:
    """Map each frame to ``palette`` (no dithering) and let pillow write the GIF, looping forever."""
    to_palette = PaletteMap(palette)
    frames = []
    for k, rgb in enumerate(images):
        frames.append(to_palette(rgb))
        progress.update(k)
    frames[0].save(tmp, format="GIF", save_all=True, append_images=frames[1:], duration=round(1000.0 / fps), loop=0)


def _write_mp4(images: Iterator[np.ndarray], tmp: Path, fps: float, progress: FrameProgress) -> None:
    """Pipe the frames to ffmpeg (libx264, yuv420p, its default quality) as they come."""
    first = next(images)
    writer = imageio_ffmpeg.write_frames(str(tmp), (first.shape[1], first.shape[0]), fps=fps, codec="libx264", quality=None, macro_block_size=2, ffmpeg_log_level="error")
    writer.send(None)
    try:
        for k, rgb in enumerate(itertools.chain([first], images)):
            writer.send(np.ascontiguousarray(rgb))
            progress.update(k)
    finally:
        writer.close()


def write_movie(
    fig: Figure,
    draw_frame: Callable[[int], None],
    n_frames: int,
    path: Path,
    fps: float,
    animated: Sequence[Artist] = (),
    progress: Optional[TextIO] = None,
) -> Path:
    """Render ``n_frames`` frames of ``fig`` (:func:`render_frames`) into ``path`` and return it.

    ``path`` ends in ``.gif`` or ``.mp4`` and was checked by
    :func:`~trajopt.plotting.output.prepare_output_path`; ``fps`` is the rate
    it plays at (:func:`frame_rate` for a GIF). The frames go to a temporary
    file renamed at the end: an interrupted rendering leaves no partial file.
    ``progress`` (e.g. ``sys.stderr``) gets :class:`FrameProgress` lines.
    """
    report = FrameProgress(path, n_frames, fps, progress)
    with atomic_output(path, overwrite=True) as tmp:
        if path.suffix.lower() == ".gif":
            samples = list(render_frames(fig, draw_frame, sorted({0, n_frames // 2, n_frames - 1}), animated))
            _write_gif(render_frames(fig, draw_frame, range(n_frames), animated), gif_palette(samples), tmp, fps, report)
        else:
            _write_mp4(render_frames(fig, draw_frame, range(n_frames), animated), tmp, fps, report)
    report.close()
    return path
