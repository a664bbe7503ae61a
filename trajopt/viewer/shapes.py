"""Triangle meshes for the viewer: primitives, mesh files, decimation, a disk cache.

Everything the viewer draws is a :class:`TriangleMesh` (vertices in the
shape's own frame [m], faces, one RGBA colour or one RGB colour per vertex).
Primitives (box, cylinder, sphere, capsule, cone) come from
``trimesh.creation`` with their axis along local +z, centred at the origin
(pinocchio's and coal's convention for cylinders and capsules).

:func:`load_mesh_file` reads a mesh file (Collada ``.dae``, STL, OBJ, ...)
with trimesh, keeps the colours the file's materials define (a part with none
gets ``fallback_color``, e.g. the URDF material; a Collada file pycollada reads
no triangles from, like ANYmal B's foot, is read by coal's assimp loader), merges duplicate vertices
and decimates every part above ``max_faces`` triangles with quadric edge
collapse (``fast_simplification``). A part of more than
``CLUSTER_ABOVE * max_faces`` triangles is first clustered: its vertices are
merged on a grid (trimesh's ``merge_vertices``, rounding in units of a cell)
whose cell is its bounding-box diagonal / ``CLUSTER_CELLS``, and the
triangles that collapse are dropped: on a very large part the collapse is
then both faster and closer to the budget than on the part alone, and the
cells are small enough to keep the shading (design notes, with the Go1's
trunk: docs/design/viewer.md). Smaller parts go to the budget directly. The result is cached
as ``.npz`` under ``<trajopt cache>/meshes`` (``$TRAJOPT_CACHE``, see
:func:`models.compiled.default_cache_dir`), keyed by the file's path, size,
modification time, the scale and the budget: the Go1's visuals take ~2 s
the first time (most of it pycollada parsing the trunk, 0.9 s) and ~0.02 s
from the cache.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from models.compiled import default_cache_dir

from .extra import require_viz

#: Default triangle budget per mesh part: larger parts are decimated (quadric edge collapse) to it.
MAX_FACES = 6000
#: Parts above this many times the budget are clustered on a grid (vertex merging) before they are decimated.
CLUSTER_ABOVE = 4
#: The clustering grid's cell is the part's bounding-box diagonal divided by this.
CLUSTER_CELLS = 1000
#: Bump when the cached arrays change meaning.
CACHE_VERSION = 2


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """A triangle mesh: ``vertices`` (V, 3) float32 [m], ``faces`` (F, 3) uint32 indices,
    and either ``color`` (4,) RGBA in [0, 1] or ``vertex_colors`` (V, 3) RGB in [0, 1]."""

    vertices: np.ndarray
    faces: np.ndarray
    color: np.ndarray
    vertex_colors: Optional[np.ndarray] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "vertices", np.ascontiguousarray(self.vertices, dtype=np.float32).reshape(-1, 3))
        object.__setattr__(self, "faces", np.ascontiguousarray(self.faces, dtype=np.uint32).reshape(-1, 3))
        object.__setattr__(self, "color", np.asarray(self.color, dtype=float).reshape(4))
        if self.vertex_colors is not None:
            object.__setattr__(self, "vertex_colors", np.ascontiguousarray(self.vertex_colors, dtype=np.float32).reshape(-1, 3))
        if self.faces.size and self.faces.max() >= len(self.vertices):
            raise ValueError(f"faces: index {self.faces.max()} out of range for {len(self.vertices)} vertices")

    def transformed(self, matrix: np.ndarray) -> "TriangleMesh":
        """The mesh with its vertices mapped by the 4x4 homogeneous ``matrix``."""
        v = self.vertices @ np.asarray(matrix[:3, :3], dtype=float).T + matrix[:3, 3]
        return TriangleMesh(v, self.faces, self.color, self.vertex_colors)


def _from_trimesh(mesh: object, color: Sequence[float]) -> TriangleMesh:
    return TriangleMesh(np.asarray(mesh.vertices), np.asarray(mesh.faces), np.asarray(color, dtype=float))


def box(size: Sequence[float], color: Sequence[float]) -> TriangleMesh:
    """A box of edge lengths ``size`` (x, y, z) [m], centred at the origin."""
    return _from_trimesh(require_viz("trimesh")["trimesh"].creation.box(extents=np.asarray(size, dtype=float)), color)


def cylinder(radius: float, length: float, color: Sequence[float], sections: int = 24) -> TriangleMesh:
    """A cylinder along local z from ``-length/2`` to ``length/2``."""
    return _from_trimesh(require_viz("trimesh")["trimesh"].creation.cylinder(radius=radius, height=length, sections=sections), color)


def sphere(radius: float, color: Sequence[float]) -> TriangleMesh:
    """A sphere (an icosphere with 320 triangles)."""
    return _from_trimesh(require_viz("trimesh")["trimesh"].creation.icosphere(subdivisions=2, radius=radius), color)


def capsule(radius: float, length: float, color: Sequence[float]) -> TriangleMesh:
    """A capsule along local z: a cylinder of ``length`` between two hemispheres (coal's ``Capsule``)."""
    return _from_trimesh(require_viz("trimesh")["trimesh"].creation.capsule(height=length, radius=radius, count=[16, 8]), color)


def cone(radius: float, length: float, color: Sequence[float], sections: int = 20) -> TriangleMesh:
    """A cone along local z, base disc at ``z = 0``, apex at ``z = length``."""
    return _from_trimesh(require_viz("trimesh")["trimesh"].creation.cone(radius=radius, height=length, sections=sections), color)


def z_onto(vectors: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) taking +z onto the directions of ``vectors`` (..., 3) (identity for zero vectors)."""
    n = np.linalg.norm(vectors, axis=-1, keepdims=True)
    d = np.where(n > 0, vectors / np.where(n > 0, n, 1.0), np.array([0.0, 0.0, 1.0]))
    helper = np.where(np.abs(d[..., :1]) < 0.9, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    x = np.cross(helper, d)
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    return np.stack([x, np.cross(d, x), d], axis=-1)


def merge(meshes: Sequence[TriangleMesh]) -> TriangleMesh:
    """One mesh of several: one colour if they share it, else colours per vertex."""
    if not meshes:
        raise ValueError("meshes: expected at least one mesh")
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    vertices = np.concatenate([m.vertices for m in meshes])
    faces = np.concatenate([m.faces + np.uint32(o) for m, o in zip(meshes, offsets)])
    first = meshes[0]
    if all(m.vertex_colors is None and np.array_equal(m.color, first.color) for m in meshes):
        return TriangleMesh(vertices, faces, first.color)
    colors = [m.vertex_colors if m.vertex_colors is not None else np.tile(m.color[:3], (len(m.vertices), 1)) for m in meshes]
    return TriangleMesh(vertices, faces, np.r_[1.0, 1.0, 1.0, min(m.color[3] for m in meshes)], np.concatenate(colors))


# ------------------------------------------------------------------ mesh files


def _part_color(part: object) -> Optional[np.ndarray]:
    """The RGBA colour [0, 1] a mesh part's file defines, or None if it defines none."""
    visual = part.visual
    if visual.kind == "texture":
        material = getattr(visual, "material", None)
        diffuse = getattr(material, "diffuse", None) if material is not None else None
        if diffuse is None:
            diffuse = getattr(material, "main_color", None)
        return None if diffuse is None else np.asarray(diffuse, dtype=float) / 255.0
    if visual.kind in ("face", "vertex"):
        return np.asarray(visual.main_color, dtype=float) / 255.0
    return None


def _decimate(vertices: np.ndarray, faces: np.ndarray, max_faces: Optional[int]) -> tuple[np.ndarray, np.ndarray]:
    if max_faces is None or len(faces) <= max_faces:
        return vertices, faces
    simplify = require_viz("fast_simplification")["fast_simplification"].simplify
    v, f = simplify(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64), target_count=int(max_faces))
    return v, f


def _merge_vertices(part: object, max_faces: Optional[int]) -> None:
    """Merge ``part``'s duplicate vertices in place; cluster them on a grid when it is far above the budget."""
    heavy = max_faces is not None and len(part.faces) > CLUSTER_ABOVE * max_faces
    cell = float(np.linalg.norm(np.ptp(part.vertices, axis=0))) / CLUSTER_CELLS if heavy else 0.0
    if not cell > 0.0:
        part.merge_vertices(merge_tex=True, merge_norm=True)
        return
    part.apply_scale(1.0 / cell)  # merge_vertices rounds to decimal digits: round to whole cells instead
    part.merge_vertices(merge_tex=True, merge_norm=True, digits_vertex=0)
    part.apply_scale(cell)
    part.update_faces(part.nondegenerate_faces())
    part.update_faces(part.unique_faces())
    part.remove_unreferenced_vertices()


def _read_mesh_file(path: Path, scale: np.ndarray, fallback_color: np.ndarray, max_faces: Optional[int]) -> TriangleMesh:
    trimesh = require_viz("trimesh")["trimesh"]
    try:
        loaded = trimesh.load(str(path), process=False)
    except Exception as err:  # trimesh raises many types for unreadable files
        raise ValueError(f"mesh: cannot read {path}: {err}") from err
    parts = loaded.dump() if isinstance(loaded, trimesh.Scene) else [loaded]
    meshes = []
    for part in parts:
        if not hasattr(part, "faces") or len(part.faces) == 0:
            continue
        color = _part_color(part)
        part = trimesh.Trimesh(vertices=np.asarray(part.vertices) * scale, faces=np.asarray(part.faces), process=False)
        _merge_vertices(part, max_faces)
        vertices, faces = _decimate(part.vertices, part.faces, max_faces)
        meshes.append(TriangleMesh(vertices, faces, fallback_color if color is None else color))
    if not meshes:  # pycollada reads no triangles from some Collada files that assimp (coal) reads
        vertices, faces = _read_with_coal(path, scale)
        vertices, faces = _decimate(vertices, faces, max_faces)
        meshes.append(TriangleMesh(vertices, faces, fallback_color))
    return merge(meshes)


def _read_with_coal(path: Path, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of a mesh file through coal's assimp loader (no colours); ``ValueError`` when empty."""
    import coal

    try:
        bvh = coal.MeshLoader().load(str(path), scale)
    except Exception as err:  # assimp's errors surface as several types
        raise ValueError(f"mesh: cannot read {path}: {err}") from err
    if bvh.num_tris == 0:
        raise ValueError(f"mesh: {path} holds no triangles")
    vertices = np.asarray(bvh.vertices(), dtype=float).reshape(-1, 3)
    faces = np.array([[t[0], t[1], t[2]] for t in (bvh.tri_indices(i) for i in range(bvh.num_tris))], dtype=np.int64)
    return vertices, faces


def _cache_file(path: Path, scale: np.ndarray, fallback_color: np.ndarray, max_faces: Optional[int]) -> Path:
    stat = path.stat()
    key = repr((CACHE_VERSION, str(path.resolve()), stat.st_size, stat.st_mtime_ns, scale.tolist(), fallback_color.tolist(), max_faces))
    return default_cache_dir() / "meshes" / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".npz")


def load_mesh_file(path: str | os.PathLike, scale: Sequence[float] = (1.0, 1.0, 1.0), fallback_color: Sequence[float] = (0.7, 0.7, 0.7, 1.0), max_faces: Optional[int] = MAX_FACES) -> TriangleMesh:
    """The triangles of a mesh file, scaled per axis, decimated to ``max_faces`` per part, cached (module docstring).

    ``max_faces=None`` keeps every triangle. Raises ``FileNotFoundError`` for a
    missing file and ``ValueError`` for one trimesh cannot read.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"mesh: no such file {path}")
    scale_arr = np.broadcast_to(np.asarray(scale, dtype=float), (3,)).copy()
    fallback = np.asarray(fallback_color, dtype=float).reshape(4)
    cached = _cache_file(path, scale_arr, fallback, max_faces)
    if cached.is_file():
        try:
            with np.load(cached) as data:
                colors = data["vertex_colors"] if "vertex_colors" in data.files else None
                return TriangleMesh(data["vertices"], data["faces"], data["color"], colors)
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache entry is rebuilt below
    mesh = _read_mesh_file(path, scale_arr, fallback, max_faces)
    arrays = {"vertices": mesh.vertices, "faces": mesh.faces, "color": mesh.color}
    if mesh.vertex_colors is not None:
        arrays["vertex_colors"] = mesh.vertex_colors
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f"{cached.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, cached)
    except OSError:
        pass  # a read-only cache only costs time
    return mesh
