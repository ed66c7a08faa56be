// ECP5 wide-function muxes for the FPGA flow's "clock" mapping (ubgen/fpga.py, docs/fpga.md
// "Mapping"): Yosys's muxcover turns trees of 2:1 muxes into $_MUX4_ / $_MUX8_ cells; this
// techmap puts them onto one or two slices before ABC maps the rest. A slice's two LUT4s feed a
// PFUMX (Z = C0 ? ALUT : BLUT), two slices' PFUMX outputs an L6MUX21 (Z = SD ? D1 : D0). Each
// LUT4 is a 2:1 mux on the first select, Z = C ? B : A (INIT bit {D,C,B,A}; D unused): a 4:1
// mux in 2 LUT4s, an 8:1 in 4, where ABC's LUT4-only mapping needs 3 and 7.

module \$_MUX4_ (input A, B, C, D, S, T, output Y);   // Y = T ? (S ? D : C) : (S ? B : A)
    wire ab, cd;
    LUT4 #(.INIT(16'hCACA)) lut_ab (.A(A), .B(B), .C(S), .D(1'b0), .Z(ab));
    LUT4 #(.INIT(16'hCACA)) lut_cd (.A(C), .B(D), .C(S), .D(1'b0), .Z(cd));
    PFUMX mux_t (.ALUT(cd), .BLUT(ab), .C0(T), .Z(Y));
endmodule

module \$_MUX8_ (input A, B, C, D, E, F, G, H, S, T, U, output Y);   // inputs A..H by {U,T,S}
    wire ab, cd, ef, gh, abcd, efgh;
    LUT4 #(.INIT(16'hCACA)) lut_ab (.A(A), .B(B), .C(S), .D(1'b0), .Z(ab));
    LUT4 #(.INIT(16'hCACA)) lut_cd (.A(C), .B(D), .C(S), .D(1'b0), .Z(cd));
    LUT4 #(.INIT(16'hCACA)) lut_ef (.A(E), .B(F), .C(S), .D(1'b0), .Z(ef));
    LUT4 #(.INIT(16'hCACA)) lut_gh (.A(G), .B(H), .C(S), .D(1'b0), .Z(gh));
    PFUMX mux_abcd (.ALUT(cd), .BLUT(ab), .C0(T), .Z(abcd));
    PFUMX mux_efgh (.ALUT(gh), .BLUT(ef), .C0(T), .Z(efgh));
    L6MUX21 mux_u (.D0(abcd), .D1(efgh), .SD(U), .Z(Y));
endmodule
