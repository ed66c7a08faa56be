"""ubgen: Amaranth generators for the Physical Unified Buffer and the push-memory CGRA.

ubgen never imports the compiler. It exports what the compiler needs to configure the hardware:
the architecture parameters (:mod:`ubgen.arch`), the controller encoding
(:func:`ubgen.controller.encode_controller`) and the register maps (:mod:`ubgen.regmap`).
"""
