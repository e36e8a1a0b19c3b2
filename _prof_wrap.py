import cProfile, time, sys
t = time.perf_counter()
pr = cProfile.Profile(); pr.enable()
from toolclear.inspector.app import main
main()
pr.disable()
print('SCRIPT', time.perf_counter() - t, file=sys.stderr)
pr.dump_stats('/tmp/app_real.prof')
