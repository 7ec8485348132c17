"""Page agreement study (2026-12-08): replays hybrid fusion from dumped evidence (see the .md)."""
import json, math, os, sys, itertools
DIR = os.environ.get('DUMPS', 'out/agreement')
SETS=['docs','fastapi','cargo','rust','django']
def stem(p):
    for e in ['.md','.markdown','.html','.htm']:
        if p.endswith(e): return p[:-len(e)]
    return p
def matches(src, exp):
    s,e=stem(src),stem(exp); return e==s or e.endswith('/'+s)
def load(s):
    gold={}
    for l in open(f'{DIR}/gold-{s}.jsonl'):
        l=l.strip()
        if not l: continue
        g=json.loads(l); gold.setdefault(g['query'],g)
    qs=[];seen=set()
    for l in open(f'{DIR}/dump-{s}.jsonl'):
        d=json.loads(l)
        if d['q'] in seen: continue
        seen.add(d['q'])
        g=gold[d['q']]
        if not g.get('expected'): continue
        d['exp']=g['expected'] if isinstance(g['expected'],list) else [g['expected']]; d['type']=g.get('type',g.get('family','?'))
        qs.append(d)
    return qs
DATA={s:load(s) for s in SETS}
def rankpages(scores):
    return [p for p,_ in sorted(scores.items(), key=lambda x:(-x[1],int(x[0])))]
def rr(d, pages):
    for i,p in enumerate(pages[:10]):
        if any(matches(d['src'].get(str(p),''),e) for e in d['exp']): return 1/(i+1)
    return 0.0
def pooled(fused, w=0.5):
    best={}
    for c,p,s in fused:
        if p not in best: best[p]=[s,None]
        elif best[p][1] is None: best[p][1]=s
    return {p:a+w*(b or 0) for p,(a,b) in best.items()}
def keep_within(ps, page, within=5):
    r=rankpages(ps)
    if page not in r: return
    at=r.index(page)
    if at<within: return
    ps[page]=ps[r[within-1]]+1e-6
def convex(d, w=0.2, p=3.0):
    """The engine's default fusion: (chunk, page, score), best first."""
    kw=d['kw']; vec=d['vec']
    best=kw[0][2] if kw else 0; div=best if best>0 else 1
    lo=vec[-1][2] if vec else 0
    cos={c[0]:c[2] for c in vec}; cos.update({c[0]:c[2] for c in d['extra']})
    kws=(1-w)*d['strength']**p
    sc={}; pg={}
    for c,pp,s,*_ in kw:
        sc[c]=kws*min(1,max(0,s/div))+w*max(0,cos.get(c,lo)); pg[c]=pp
    for c,pp,s,*_ in vec:
        if c not in sc: sc[c]=w*max(0,s); pg[c]=pp
    return sorted(((c,pg[c],s) for c,s in sc.items()), key=lambda x:(-x[2],x[0]))
def current(d, w=0.2, p=3.0):
    ps=pooled(convex(d, w, p))
    if d['kw']: keep_within(ps, d['kw'][0][1])
    return rankpages(ps)
def kwonly(d):
    return rankpages(pooled([(c,p,s) for c,p,s,*_ in d['kw']]))
def veconly(d):
    return rankpages(pooled([(c,p,s) for c,p,s,*_ in d['vec']]))
def evalf(f, sets=SETS, verbose=False):
    out={}
    for s in sets:
        v=[rr(d,f(d)) for d in DATA[s]]
        out[s]=sum(v)/len(v)
    return out
def fuse(d, w=0.2, p=3.0, vn='raw', kn='best', sec=0.5, tb=0.0, hb=0.0, kwin=5, vp=0.0, rrk=None, agree=0.0):
    kw=d['kw']; vec=d['vec']
    best=kw[0][2] if kw else 0; div=best if best>0 else 1
    hi=vec[0][2] if vec else 1; lo=vec[-1][2] if vec else 0
    cos={c[0]:c[2] for c in vec}; cos.update({c[0]:c[2] for c in d['extra']})
    info={}
    for r in kw+vec+d['extra']: info[r[0]]=r
    st=d['strength']
    kws=(1-w)*st**p
    # vector confidence: gap between best and 10th
    if vn=='raw': V=lambda x:max(0,x)
    elif vn=='minmax': V=lambda x:(x-lo)/(hi-lo) if hi>lo else 1
    elif vn=='best': V=lambda x:max(0,x)/hi if hi>0 else 0
    elif vn=='z':
        xs=[c[2] for c in vec]; m=statistics.mean(xs) if xs else 0; sd=statistics.pstdev(xs) if len(xs)>1 else 1
        V=lambda x:max(0,(x-m)/(sd or 1))/3
    if kn=='best': K=lambda x:min(1,max(0,x/div))
    elif kn=='z':
        xs=[c[2] for c in kw[:50]]; m=statistics.mean(xs) if xs else 0; sd=statistics.pstdev(xs) if len(xs)>1 else 1
        K=lambda x:max(0,(x-m)/(sd or 1))/3
    vrank={c[0]:i for i,c in enumerate(vec)}; krank={c[0]:i for i,c in enumerate(kw)}; kscore={c[0]:c[2] for c in kw}
    ws = w*(1+vp*(1-st))
    sc={}
    for c in info:
        k = K(kscore[c]) if c in krank else 0
        v = V(cos.get(c,lo))
        s = kws*k + ws*v
        if rrk: s = (kws/(rrk+krank[c]) if c in krank else 0) + (ws/(rrk+vrank[c]) if c in vrank else 0)
        s += tb*info[c][3] + hb*info[c][4]
        if agree and c in krank and c in vrank: s+=agree
        sc[c]=s
    fused=sorted(((c,info[c][1],s) for c,s in sc.items()), key=lambda x:(-x[2],x[0]))
    ps=pooled(fused,sec)
    if kw and kwin: keep_within(ps, kw[0][1], kwin)
    return rankpages(ps)
def score(**kw): return evalf(lambda d: fuse(d,**kw))
BASE={s:max(evalf(kwonly)[s],evalf(veconly)[s]) for s in SETS}
def cons_fuse(d, g=0.1, top=10, w=0.2, p=3.0, mode='score', skip_first=False, sec=0.5):
    kw=d['kw']; vec=d['vec']
    lo=vec[-1][2] if vec else 0
    ps=pooled(convex(d, w, p),sec)
    hi=vec[0][2] if vec else 1
    lo_t=vec[min(top,len(vec))-1][2] if vec else 0
    vc={}; seen=set()
    for i,(c,pp,s,*_) in enumerate(vec[:top]):
        if skip_first and pp not in seen: seen.add(pp); continue
        if mode=='count': x=1/top
        elif mode=='score': x=(s-lo)/(hi-lo+1e-9)/top
        elif mode=='rel': x=(s-lo_t)/(hi-lo_t+1e-9)/top
        vc[pp]=vc.get(pp,0)+x
    for pp in ps: ps[pp]+= g*vc.get(pp,0)
    if kw: keep_within(ps, kw[0][1])
    return rankpages(ps)
def per_type(f, s):
    out={}
    for d in DATA[s]:
        out.setdefault(d['type'],[]).append(rr(d,f(d)))
    out['all']=[x for v in list(out.values()) for x in v]
    return {t:(sum(v)/len(v),len(v)) for t,v in out.items()}
KW={s:per_type(kwonly,s) for s in SETS}; VE={s:per_type(veconly,s) for s in SETS}
def check(f):
    fails=[]; alls={}
    for s in SETS:
        h=per_type(f,s)
        for t,(m,n) in h.items():
            best=max(KW[s][t][0],VE[s][t][0])
            if m + max(0.01, 0.5/n) < best: fails.append(f"{s}/{t} {m:.3f}<{best:.3f}")
        alls[s]=h['all'][0]
    return alls, fails
if True:
  for top in [10,20,30]:
    for g in [0.1,0.2,0.3,0.4,0.5,0.7]:
        alls,fails=check(lambda d: cons_fuse(d,mode='score',top=top,g=g))
        print(f"top{top} g{g}", ' '.join(f"{s}:{alls[s]:.3f}" for s in SETS), 'minlead %+.3f'%min(alls[s]-BASE[s] for s in SETS), 'FAILS', fails)
alls,fails=check(current); print('current', alls, fails)
print('--- LOSO')
cfgs=[(top,g) for top in [5,10,20,30,50] for g in [0.1,0.2,0.3,0.4,0.5,0.7,1.0]]
res={}
for top,g in cfgs:
    f=lambda d,top=top,g=g: cons_fuse(d,mode='score',top=top,g=g)
    res[(top,g)]={s:per_type(f,s) for s in SETS}
def fails_on(r,s):
    return [t for t,(m,n) in r[s].items() if m+max(0.01,0.5/n) < max(KW[s][t][0],VE[s][t][0])]
for s in SETS:
    others=[x for x in SETS if x!=s]
    ok=[c for c in cfgs if not any(fails_on(res[c],o) for o in others)]
    c=max(ok, key=lambda c: sum(res[c][o]['all'][0] for o in others))
    r=res[c][s]['all'][0]
    print(s, 'chosen', c, 'held-out MRR %.3f'%r, 'lead %+.3f'%(r-BASE[s]), 'gate fails', fails_on(res[c],s))
