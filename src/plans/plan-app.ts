import * as fs from 'fs';
import * as path from 'path';
import { ApiObject, App, Chart, YamlOutputType } from 'cdk8s';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import type { PartOf } from '../model/labels';
import {
  Action, ANNOTATIONS, CaRotation, Flow, Gate, ImageFromFact, LABELS, MANAGED_BY, ObjectRef, Plan, PLAN_FORMAT_VERSION, PlanFlow, PlanNotes, Requirement, ServerIdentity, Step, StepFileSummary, Wait,
} from '../plan/types';
import { hashSpec, hashText } from '../plan/spec-hash';
import { PLAN_INDEX } from '../plan/reader';
import { KUSTOMIZATION, kustomization } from './kustomization';
import { defaultWait } from '../plan/waits';

/** What a step records for the runtime beside its objects. */
export interface StepOptions {
  /** One line for `uyuni-cdk plan` and the progress output. */
  readonly description: string;
  /** @default the plan's default step timeout */
  readonly timeoutSeconds?: number;
  /** @default none */
  readonly requires?: readonly Requirement[];
  /** @default none */
  readonly actions?: readonly Action[];
  /** @default none */
  readonly gates?: readonly Gate[];
  /** A Job of this step whose `key=value` output becomes facts. @default none */
  readonly factsFrom?: ObjectRef;
  /**
   * What to wait for. @default derived per kind (src/plan/waits.ts): Job → complete, Deployment → rollout,
   * cert-manager Certificate/Issuer → ready, PVC → bound, anything else → exists.
   */
  readonly waits?: readonly Wait[];
  /** Images of the step's Deployments the runtime takes from facts (types.ts `ImageFromFact`). @default none */
  readonly imagesFromFacts?: readonly ImageFromFact[];
  /** What data its Jobs delete or overwrite on every run (types.ts Step `destroysData`). @default none */
  readonly destroysData?: string;
}

export interface PlanAppProps {
  /** The plan's name: its directory under dist/ and the `uyuni-cdk.io/plan` label. */
  readonly name: string;
  readonly description: string;
  readonly namespace: string;
  readonly partOf: PartOf;
  readonly defaultStepTimeoutSeconds: number;
  readonly deadlineSeconds: number;
  /** The flow the plan finishes (its one-shot steps: `markOneShot`). @default none */
  readonly flow?: PlanFlow;
  /** The server the plan makes, recorded by the runtime and checked by the next run. @default none */
  readonly identity?: ServerIdentity;
  /** Shown by the runtime after a successful run (src/plans/notes.ts). @default none */
  readonly notes?: PlanNotes;
  /** A phase of a CA rotation. @default none */
  readonly caRotation?: CaRotation;
}

/** One step: a chart (its manifest file) plus what the runtime needs to know about it. */
export class StepChart extends Chart {
  /** The step's file, `NNNN-<step>.k8s.yaml`: the chart's id is `NNNN-<step>`. */
  readonly file: string;

  constructor(scope: App, index: number, readonly stepName: string, readonly options: StepOptions, labels: Record<string, string>) {
    super(scope, `${String(index).padStart(4, '0')}-${stepName}`, { labels, disableResourceNameHashes: true });
    this.file = `${this.node.id}.k8s.yaml`;
  }
}

/** A step's objects are built into a StepChart by `synth`, into a plain construct by `buildInto`. */
interface PendingStep { readonly name: string; readonly options: StepOptions; readonly build: (scope: Construct) => void }

/**
 * An L3 plan: an App whose charts are its steps, named `0000-<step>`, `0001-…` in order, so cdk8s
 * writes them as `0000-<step>.k8s.yaml`, …. No chart dependencies: cdk8s would turn each into a
 * dependency of every object on every object of the step before (quadratic, for an order the
 * names give already). `synth` also writes the plan index (PLAN_INDEX) and the kustomization (KUSTOMIZATION).
 *
 * A step whose build adds no object writes no file (an empty file is not valid for
 * `kubectl apply -f`); its requirements, actions and gates move to the next step.
 */
/** A plan's default step timeout and deadline: the configuration's (timeouts.defaultStepSeconds, timeouts.deadlineSeconds). */
export function configTimeouts(config: UyuniConfig): Pick<PlanAppProps, 'defaultStepTimeoutSeconds' | 'deadlineSeconds'> {
  return { defaultStepTimeoutSeconds: config.timeouts.defaultStepSeconds, deadlineSeconds: config.timeouts.deadlineSeconds };
}

export class PlanApp {
  private readonly pending: PendingStep[] = [];
  /** Step name → the flow whose one-shot data step it is. */
  private readonly oneShots = new Map<string, Flow>();

  constructor(readonly props: PlanAppProps) {}

  /** Adds a step after the ones added so far. */
  addStep(name: string, options: StepOptions, build: (scope: Construct) => void): this {
    if (this.pending.some((s) => s.name === name)) throw new Error(`plan ${this.props.name}: step ${name} is added twice`);
    this.pending.push({ name, options, build });
    return this;
  }

  /** The steps added so far, by name, from step `after` on (not it). */
  stepsAfter(after: string): string[] {
    const i = this.pending.findIndex((s) => s.name === after);
    if (i < 0) throw new Error(`plan ${this.props.name}: no step ${after}`);
    return this.pending.slice(i + 1).map((s) => s.name);
  }

  /** Sets the images step `name`'s Deployments take from facts (types.ts `ImageFromFact`). */
  setImagesFromFacts(name: string, images: readonly ImageFromFact[]): this {
    const i = this.pending.findIndex((s) => s.name === name);
    if (i < 0) throw new Error(`plan ${this.props.name}: no step ${name}`);
    this.pending[i] = { ...this.pending[i], options: { ...this.pending[i].options, imagesFromFacts: images } };
    return this;
  }

  /** Adds a step right after step `previous`, or first when the plan has no step of that name. */
  insertStepAfter(previous: string, name: string, options: StepOptions, build: PendingStep['build']): this {
    this.addStep(name, options, build);
    const step = this.pending.pop()!;
    this.pending.splice(this.pending.findIndex((s) => s.name === previous) + 1, 0, step);
    return this;
  }

  /**
   * Marks steps as one-shot data steps of `flow`: the runtime runs each once per flow and
   * refuses to run it again (docs/plan-format.md, `oneShot`).
   */
  markOneShot(flow: Flow, ...steps: string[]): this {
    for (const s of steps) {
      if (!this.pending.some((p) => p.name === s)) throw new Error(`plan ${this.props.name}: no step ${s} to mark one-shot`);
      this.oneShots.set(s, flow);
    }
    return this;
  }

  /** Every requirement of the steps added so far, in step order. */
  get requirements(): Requirement[] {
    return this.pending.flatMap((s) => s.options.requires ?? []);
  }

  get stepNames(): string[] {
    return this.pending.map((s) => s.name);
  }

  /**
   * Builds every step's objects into `scope` (a user's chart), one construct per step named after
   * it, each object labelled as `synth` labels it: the library's L3 constructs (UyuniServer,
   * UyuniProxy) are plans built this way, the step order kept as Argo CD's sync waves as in
   * `synth`. What only the runtime reads (waits, requirements) has no place in a chart.
   */
  buildInto(scope: Construct): void {
    let wave = 0;
    for (const step of this.pending) {
      const construct = new Construct(scope, step.name);
      step.build(construct);
      const objects = construct.node.findAll().filter(ApiObject.isApiObject);
      for (const o of objects) {
        // As a chart's labels in `synth`: an object's own label of the same key wins.
        for (const [key, value] of Object.entries(this.labelsOf(step.name))) {
          if (o.metadata.getLabel(key) === undefined) o.metadata.addLabel(key, value);
        }
        o.metadata.addAnnotation(ANNOTATIONS.syncWave, String(wave));
      }
      // Waves count the steps that have objects, as the step files do.
      if (objects.length > 0) wave++;
    }
  }

  private labelsOf(step: string): Record<string, string> {
    return {
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.partOf]: this.props.partOf,
      [LABELS.plan]: this.props.name,
      [LABELS.step]: step,
    };
  }

  /** Writes the step files and the plan index into `outdir` (which must not exist yet). */
  synth(outdir: string, generator: string): Plan {
    const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART, outputFileExtension: '.k8s.yaml' });
    const charts: StepChart[] = [];
    let carried: Pick<StepOptions, 'requires' | 'actions' | 'gates'> = {};
    for (const step of this.pending) {
      const options: StepOptions = {
        ...step.options,
        requires: [...(carried.requires ?? []), ...(step.options.requires ?? [])],
        actions: [...(carried.actions ?? []), ...(step.options.actions ?? [])],
        gates: [...(carried.gates ?? []), ...(step.options.gates ?? [])],
      };
      const chart = new StepChart(app, charts.length, step.name, options, this.labelsOf(step.name));
      step.build(chart);
      if (!chart.node.findAll().some((c) => ApiObject.isApiObject(c))) {
        app.node.tryRemoveChild(chart.node.id);
        carried = options;
        continue;
      }
      carried = {};
      charts.push(chart);
    }
    if (charts.length === 0) throw new Error(`plan ${this.props.name} has no objects`);
    if ((carried.requires?.length ?? 0) + (carried.actions?.length ?? 0) + (carried.gates?.length ?? 0) > 0) {
      throw new Error(`plan ${this.props.name}: its last step has no objects but carries requirements, actions or gates`);
    }

    // Argo CD syncs wave by wave, lowest first, each healthy before the next: the step order.
    for (const [index, chart] of charts.entries()) {
      for (const o of chart.node.findAll().filter(ApiObject.isApiObject)) o.metadata.addAnnotation(ANNOTATIONS.syncWave, String(index));
    }
    app.synth();
    const steps = charts.map((chart) => this.stepIndex(outdir, chart));
    const plan: Plan = {
      formatVersion: PLAN_FORMAT_VERSION,
      name: this.props.name,
      description: this.props.description,
      generator,
      namespace: this.props.namespace,
      selector: { [LABELS.partOf]: this.props.partOf, [LABELS.managedBy]: MANAGED_BY },
      deadlineSeconds: this.props.deadlineSeconds,
      steps,
      ...(this.props.flow ? { flow: this.props.flow } : {}),
      ...(this.props.identity ? { identity: this.props.identity } : {}),
      ...(this.props.notes ? { notes: this.props.notes } : {}),
      ...(this.props.caRotation ? { caRotation: this.props.caRotation } : {}),
    };
    fs.writeFileSync(path.join(outdir, PLAN_INDEX), `${JSON.stringify(plan, null, 2)}\n`);
    fs.writeFileSync(path.join(outdir, KUSTOMIZATION), kustomization(plan));
    return plan;
  }

  private stepIndex(outdir: string, chart: StepChart): Step {
    const { file } = chart;
    if (!fs.existsSync(path.join(outdir, file))) {
      throw new Error(`cdk8s did not write ${file} for step ${chart.stepName}`);
    }
    // Read from the constructs (in the order cdk8s writes them) rather than resolving the chart twice.
    const apiObjects = chart.node.findAll().filter(ApiObject.isApiObject);
    const objects: ObjectRef[] = apiObjects.map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.name,
      ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    }));
    const o = chart.options;
    return {
      name: chart.stepName,
      file,
      description: o.description,
      objects,
      waits: o.waits ?? objects.map((object) => ({ object, for: defaultWait(object) })),
      timeoutSeconds: o.timeoutSeconds ?? this.props.defaultStepTimeoutSeconds,
      requires: o.requires ?? [],
      actions: o.actions ?? [],
      gates: o.gates ?? [],
      ...(o.factsFrom ? { factsFrom: o.factsFrom } : {}),
      fileSummary: fileSummary(fs.readFileSync(path.join(outdir, file), 'utf8'), apiObjects),
      ...(this.oneShots.has(chart.stepName) ? { oneShot: this.oneShots.get(chart.stepName) } : {}),
      ...(o.imagesFromFacts?.length ? { imagesFromFacts: o.imagesFromFacts } : {}),
      ...(o.destroysData ? { destroysData: o.destroysData } : {}),
    };
  }
}

/**
 * What `status` reads instead of parsing the step file (types.ts `StepFileSummary`): the digest
 * of the text cdk8s wrote, and each Job's spec hash as the runtime would take it from the file
 * (src/runtime/core/manifests.ts `specHash`: the annotation, else the hash of the spec). Only the Jobs
 * are resolved again, not the chart.
 */
function fileSummary(text: string, objects: readonly ApiObject[]): StepFileSummary {
  const jobSpecHashes: Record<string, string> = {};
  for (const o of objects.filter((x) => x.kind === 'Job')) {
    const json = o.toJson() as { metadata?: { annotations?: Record<string, string> }; spec?: unknown };
    jobSpecHashes[o.name] = json.metadata?.annotations?.[ANNOTATIONS.specHash] ?? hashSpec(json.spec ?? {});
  }
  return { sha256: hashText(text), jobSpecHashes };
}
