import csv,sys
D=sys.argv[1]
rows=list(csv.reader(l for l in open(D+"/ncu.csv") if l.startswith('"')))
h=rows[0]; ix={x:i for i,x in enumerate(h)}
by={}
for r in rows[1:]:
    by.setdefault(int(r[ix["ID"]]),{})[r[ix["Metric Name"]]]=float(r[ix["Metric Value"]].replace(",",""))
L=list(csv.DictReader(open(D+"/launches.csv")))
for i,m in sorted(by.items()):
    l=L[i]; c=m["gpc__cycles_elapsed.max"]
    if "l2" in l["kernel"] or "window" in l["kernel"] or l["kernel"]=="warm": extra=f" {float(l['bytes_or_fetches'])/132/c:.1f} B/clk/SM (lts {m['lts__t_bytes.sum']/132/c:.1f}, lts bytes/requested {m['lts__t_bytes.sum']/float(l['bytes_or_fetches']):.2f})"
    else: extra=f" {c*132/float(l['bytes_or_fetches']):.2f} clk/SM per warp fetch; fwav/inst {m['l1tex__f_wavefronts.sum']/max(1,m['sm__inst_executed_pipe_tex.sum']):.2f} hit {m['l1tex__t_sector_hit_rate.pct']:.0f}"
    print(l["kernel"], int(c), extra)
