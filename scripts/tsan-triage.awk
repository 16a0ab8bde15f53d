# Triage of ThreadSanitizer reports (scripts/tsan.sh). A data race counts as ours when, in
# either racing access, the first frame outside libstdc++'s headers and the sanitizer
# runtime is in this repository's sources; a race whose racing access is made by gRPC's
# inline header code (on objects gRPC hands between its threads through synchronisation
# TSan cannot see: the library is not instrumented) is counted as gRPC-internal, and so
# is one between such an access and the allocation of the object (its creation, before it
# was handed to gRPC). Every other kind of report (use after free, lock-order inversion,
# ...) counts as ours.
# Prints the reports that count as ours and a summary line; exits 1 if there is any.
# Usage: awk -f scripts/tsan-triage.awk LOG...
function is_ours(frame) {
  return frame ~ /(^|[ \/])(deviceplugin|common|config|tools|tests|cni|topo|doctor)\/[^ ]*\.(cc|h):[0-9]+/ &&
         frame !~ /(^|[ \/])gen\//  # generated gRPC code: relative when ccache's basedir applies
}
/^WARNING: ThreadSanitizer: / {
  in_report = 1; ours = ($0 !~ /: data race/); text = ""; access = 0
}
in_report { text = text $0 "\n" }
in_report && /^  (Previous )?(atomic )?([Rr]ead|[Ww]rite) of size/ { access = 1; next }
in_report && access && /^    #[0-9]+ / {
  # The "write" of a fresh allocation: the object is being created. Another thread can
  # only reach it once it was handed over, so a race with it alone means the hand-over
  # went through gRPC; the other access decides.
  if ($0 ~ /^    #0 (operator new|malloc|calloc)/) { access = 0; next }
  if ($0 ~ /\/usr\/include\/c\+\+\// || $0 ~ /libsanitizer|libtsan/) next
  if (is_ours($0)) ours = 1
  access = 0
  next
}
in_report && /^$/ { access = 0 }
in_report && /^SUMMARY: ThreadSanitizer/ {
  in_report = 0
  if (ours) { printf "%s\n", text; n_ours++ } else { n_grpc++ }
}
END {
  printf "tsan triage: %d report(s) in our code, %d gRPC-internal (not instrumented)\n",
    n_ours, n_grpc
  exit n_ours > 0 ? 1 : 0
}
