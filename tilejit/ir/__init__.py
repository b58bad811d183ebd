"""The tile IR: typed SSA values, ops with source locations, structured control flow."""
from .types import (DType, PointerType, TileType, dtype_from_name, dtype_from_numpy, int_range,
                    int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                    float16, bfloat16, float32, float64, ALL_DTYPES)
from .core import Argument, Block, Function, Loc, Op, Region, RuleTable, UNKNOWN_LOC, Value
from .builder import Builder
from . import ops
