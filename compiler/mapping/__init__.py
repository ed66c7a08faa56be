"""Buffer mapping (thesis ch. 5; paper §V-C; docs/design.md §3.3): UnifiedBuffer -> UBImpl.

One pure function per pass, each in its own module:

* :mod:`.dependence`     dependence-distance analysis (t2addr, Apply, Delta; §5.1.1)
* :mod:`.shift_register` delay chains and trees of shift registers and memories (§5.1.2–5.1.3)
* :mod:`.port_sharing`   output-port sharing (§5.1.4)
* :mod:`.banking`        cyclic banking by the GCD heuristic, fallback to duplication (§5.2)
* :mod:`.merge`          bank merging up to the physical port count (§5.2.3)
* :mod:`.chaining`       chaining of tiles by capacity (§5.3)
* :mod:`.hierarchy`      memory level GLB / MEM / REG (§5.4)
* :mod:`.vectorize`      wide-fetch vectorization and AGG/SRAM/TB scheduling (§5.5)
* :mod:`.linearize`      address linearization with circular-buffer modulo (§5.6)
* :mod:`.map_buffer`     the chain of passes (§5.7)
"""
