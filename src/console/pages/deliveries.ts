// PLACEHOLDER owned by helper C2: replace this file entirely.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function registerDeliveryPages(_scope: FastifyInstance, _services: Services): void {}
