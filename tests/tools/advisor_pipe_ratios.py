"""Independent numbers for tests/it/advisor_operators.rs: per rank of the real roots
../shared/samples/ascend-pt/{text,db}/level1, the compute tasks with pipe ratios ("measured"),
those whose largest of nine ratios is in (0, 0.8] ("flagged", msprof-analyze's operator_bound_ratio),
their time (ns) and the time at stake sum(dur * (1 - largest / 0.8)); and the OP State counts.
Reads kernel_details.csv with the csv module and the dbs with sqlite3 (COMPUTE_TASK_INFO joined
with TASK and TASK_PMU_INFO). Run: python3 tests/tools/advisor_pipe_ratios.py
"""
import csv,sqlite3,collections,glob,os
S_DIR=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),'../../../shared/samples'))
P=['aic_mac_ratio','aic_scalar_ratio','aic_mte1_ratio','aic_mte2_ratio','aic_fixpipe_ratio','aiv_vec_ratio','aiv_scalar_ratio','aiv_mte2_ratio','aiv_mte3_ratio']
def report(label, tasks):
    meas=[(d,max(r)) for d,r in tasks if max(r)>0]
    fl=[(d,m) for d,m in meas if m<=0.8]
    stake=sum(d*(1-m/0.8) for d,m in fl)
    print(label,'measured',len(meas),sum(d for d,_ in meas),'flagged',len(fl),sum(d for d,_ in fl),'stake',round(stake))
for r in (0,1):
    f=f'{S_DIR}/ascend-pt/text/level1/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv'
    tasks=[]
    for x in csv.DictReader(open(f)):
        if x['Accelerator Core'] in ('HCCL','COMMUNICATION'): continue
        rr=[float(x[p]) if x[p] not in ('N/A','') else 0.0 for p in P]
        from decimal import Decimal
        tasks.append((int(Decimal(x['Duration(us)'])*1000), rr))
    report(f'text r{r}',tasks)
    print('  op_state', collections.Counter(x['OP State'] for x in csv.DictReader(open(f)) if x['Accelerator Core'] not in ('HCCL','COMMUNICATION')))
for r in (0,1):
    db=glob.glob(f'{S_DIR}/ascend-pt/db/level1/rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db')[0]
    c=sqlite3.connect(db); S=dict(c.execute("select id,value from STRING_IDS"))
    pmu=collections.defaultdict(dict)
    for g,n,v in c.execute("select globalTaskId,name,value from TASK_PMU_INFO"): pmu[g][S[n]]=v
    tasks=[(d,[float(pmu[g].get(p) or 0) for p in P]) for g,d in c.execute("select c.globalTaskId, t.endNs-t.startNs from COMPUTE_TASK_INFO c join TASK t using(globalTaskId)") if g in pmu]
    report(f'db r{r}',tasks)
